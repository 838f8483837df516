/* A bit slice as a table key (`f[h:l]: exact`): the control plane gives the slice's
 * value, the lookup compares those bits of the field only. */
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
    action to(bit<9> port) { sm.egress_spec = port; }
    action drop() { mark_to_drop(sm); }
    table by_slice {
        key = { h.eth.type[11:4]: exact @name("type_mid"); }
        actions = { to; drop; }
        default_action = drop();
    }
    apply { by_slice.apply(); }
}
control E(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout metadata m) { apply { } }
control D(packet_out pkt, in headers h) { apply { pkt.emit(h.eth); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
