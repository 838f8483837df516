/* A table with no default_action: a miss runs NoAction (P4_16 spec, tables), so
 * switch(action_run) takes none of the listed branches, even when the table has
 * only one action. */
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
    action mark(bit<8> v) { h.eth.src[7:0] = v; }
    table only_one {
        key = { h.eth.dst: exact; }
        actions = { mark; }
    }
    apply {
        sm.egress_spec = 1;
        switch (only_one.apply().action_run) {
            mark: { h.eth.type = 0x0001; }
        }
        h.eth.dst[7:0] = 0xee;
    }
}
control E(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout metadata m) { apply { } }
control D(packet_out pkt, in headers h) { apply { pkt.emit(h.eth); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
