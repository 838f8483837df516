/* header == header compares the valid bits and, when both are valid, every field
 * (P4_16 spec, operations on headers); two invalid headers are equal. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> type; }
header pair_t { bit<8> a; bit<8> b; }
struct headers { ethernet_t eth; pair_t p1; pair_t p2; pair_t p3; }
struct metadata { }

parser P(packet_in pkt, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.eth);
        transition select(h.eth.type) {
            0x0001: one;
            0x0002: two;
            default: accept;
        }
    }
    state one { pkt.extract(h.p1); transition accept; }
    state two { pkt.extract(h.p1); pkt.extract(h.p2); transition accept; }
}
control VC(inout headers h, inout metadata m) { apply { } }
control I(inout headers h, inout metadata m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        bit<8> r = 0;
        if (h.p1 == h.p2) { r = r | 1; }        /* both invalid, or equal fields */
        if (h.p2 == h.p3) { r = r | 2; }        /* p3 is never valid */
        if (h.p1 != h.p3) { r = r | 4; }
        h.eth.src[7:0] = r;
    }
}
control E(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout metadata m) { apply { } }
control D(packet_out pkt, in headers h) {
    apply { pkt.emit(h.eth); pkt.emit(h.p1); pkt.emit(h.p2); }
}
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
