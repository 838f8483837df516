/* The invalid header expression {#} and (H){#} (P4_16 8.26): assigning it invalidates
 * the header; h == {#} holds exactly when h is invalid. */
#include <core.p4>
#include <v1model.p4>
header ethernet_t { bit<48> dst; bit<48> src; bit<16> type; }
header h_t { bit<8> a; }
struct headers { ethernet_t eth; h_t one; h_t two; }
struct metadata { }
parser P(packet_in pkt, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.eth); pkt.extract(h.one); pkt.extract(h.two); transition accept; }
}
control VC(inout headers h, inout metadata m) { apply { } }
control I(inout headers h, inout metadata m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (h.eth.dst[0:0] == 1) { h.one = (h_t){#}; }
        if (h.eth.dst[1:1] == 1) { h.two = {#}; }
        bit<8> r = 0;
        if (h.one == (h_t){#}) { r = r | 1; }
        if ({#} != h.two) { r = r | 2; }
        h.eth.src[7:0] = r;
    }
}
control E(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout metadata m) { apply { } }
control D(packet_out pkt, in headers h) { apply { pkt.emit(h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
