/* v1model assert/assume that hold: the packet goes on. bmv2's primitives take data,
 * so the condition (also a constant one) reaches them as b2d(condition); a boolean
 * there makes simple_switch abort while loading. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> type; }
struct headers { ethernet_t eth; }
struct metadata { }

parser P(packet_in pkt, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.eth); transition accept; }
}
control VC(inout headers h, inout metadata m) { apply { } }
control I(inout headers h, inout metadata m, inout standard_metadata_t sm) {
    action checked(bit<9> port) {
        assert(h.eth.type != 0);
        assume(true);
        sm.egress_spec = port;
    }
    apply {
        assert(h.eth.isValid());
        assume(h.eth.src == 1 || h.eth.src == 2);
        checked((bit<9>) h.eth.src);
        h.eth.type = h.eth.type + 1;
    }
}
control E(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout metadata m) { apply { } }
control D(packet_out pkt, in headers h) { apply { pkt.emit(h.eth); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
