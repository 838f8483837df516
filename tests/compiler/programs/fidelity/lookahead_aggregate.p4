// pkt.lookahead<H>() of a whole header and of a struct, assigned to locals in a parser
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
struct nibbles_t { bit<4> hi; bit<4> lo; }
struct headers { h_t p; h_t h; }
struct meta_t { }
parser P(packet_in pkt, out headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        h_t peek = pkt.lookahead<h_t>();
        nibbles_t n = pkt.lookahead<nibbles_t>();
        pkt.extract(hdr.h);
        hdr.p = peek;
        hdr.p.a = peek.a + 1;
        hdr.p.b = (bit<8>)n.hi + (bit<8>)n.lo;
        transition accept;
    }
}
control V(inout headers hdr, inout meta_t m) { apply { } }
control I(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    apply { sm.egress_spec = 1; }
}
control E(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.p); pkt.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
