// Parser locals declared with an initialiser (P4_16 12.x; p4c's MoveInitializers) are
// set once each time the parser starts: not again when a state loops back to `start`,
// and a sub-parser's at each of its applies.
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> more; bit<8> v; }
header out_t { bit<8> count; bit<8> port; bit<8> sub; bit<8> pad; }
struct headers { h_t[3] st; out_t o; }
struct meta_t { }
bit<8> plus_one(in bit<8> x) { return x + 1; }
parser Sub(packet_in pkt, inout bit<8> acc) {
    bit<8> base = 10;
    state start { acc = acc + base; base = base + 1; transition accept; }
}
parser P(packet_in pkt, out headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    bit<8> n = 0;
    bit<8> port = plus_one((bit<8>) sm.ingress_port);
    Sub() s;
    state start {
        pkt.extract(hdr.st.next);
        n = n + 1;
        transition select(hdr.st.last.more) { 1: start; default: finish; }
    }
    state finish {
        hdr.o.setValid();
        hdr.o.count = n;
        hdr.o.port = port;
        hdr.o.sub = 0;
        hdr.o.pad = 0;
        s.apply(pkt, hdr.o.sub);
        s.apply(pkt, hdr.o.sub);
        transition accept;
    }
}
control V(inout headers hdr, inout meta_t m) { apply { } }
control I(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    apply { sm.egress_spec = 1; }
}
control E(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.st); pkt.emit(hdr.o); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
