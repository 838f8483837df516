// A function returning a value called as a statement (the value is discarded, the
// side effects on inout parameters stay); _ as an argument for an out parameter.
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
struct headers { h_t h; }
struct meta_t { }
control V(inout headers hdr, inout meta_t m) { apply { } }
parser P(packet_in pkt, out headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
bit<8> bump(inout bit<8> x) { x = x + 1; return x; }
bit<8> twice(in bit<8> x, out bit<8> doubled) { doubled = x + x; return x; }
control I(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        bump(hdr.h.a);
        hdr.h.b = twice(hdr.h.b, _) + 1;
        sm.egress_spec = 1;
    }
}
control E(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
