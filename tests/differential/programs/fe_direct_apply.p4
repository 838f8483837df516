// Direct type invocation (P4_16 14.1): Sub.apply(...) applies an implicit instance of
// control Sub; two direct calls share one instance.
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
struct headers { h_t h; }
struct meta_t { }
control V(inout headers hdr, inout meta_t m) { apply { } }
parser P(packet_in pkt, out headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control Sub(inout bit<8> x) { apply { x = x + 1; } }
control I(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        Sub.apply(hdr.h.a);
        Sub.apply(hdr.h.b);
        Sub.apply(hdr.h.b);
        sm.egress_spec = 1;
    }
}
control E(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
