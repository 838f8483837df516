/* A header stack's lastIndex and last.f as select keys in a parser loop (P4_16 8.18):
 * extraction stops after the element whose a field is 0 or when lastIndex reaches 1. */
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; }
struct headers { h_t[3] st; }
struct metadata { }
parser P(packet_in pkt, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.st.next);
        transition select(h.st.last.a) { 0: accept; default: more; }
    }
    state more { transition select(h.st.lastIndex) { 1: accept; default: start; } }
}
control VC(inout headers h, inout metadata m) { apply { } }
control I(inout headers h, inout metadata m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (h.st[2].isValid()) { h.st[0].a = 0xee; }
        if (h.st[1].isValid()) { h.st[1].a = h.st[1].a + 1; }
    }
}
control E(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout metadata m) { apply { } }
control D(packet_out pkt, in headers h) { apply { pkt.emit(h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
