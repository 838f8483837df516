/* STF entries named with `add ... = NAME` (p4c's STF grammar): `check_counter C($NAME)`
 * (or C(NAME)) reads the direct counter cell of that entry, and `remove NAME` deletes
 * that entry (simple_switch_CLI's table_delete with the handle bmv2 gave it), so its
 * key then misses and the default action runs. One table is plain, one has an action
 * profile (its entries are deleted with table_indirect_delete). */
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> k; bit<8> v; }
struct headers { h_t h; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control Ig(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    direct_counter(CounterType.packets_and_bytes) hits;
    action fwd(bit<9> port) {
        hits.count();
        sm.egress_spec = port;
    }
    action miss() {
        hits.count();
        sm.egress_spec = 3;
    }
    table t {
        key = { hdr.h.k : exact; }
        actions = { fwd; miss; }
        default_action = miss();
        counters = hits;
    }
    action set_v(bit<8> v) { hdr.h.v = v; }
    action keep() { }
    table p {
        key = { hdr.h.k : exact; }
        actions = { set_v; keep; }
        implementation = action_profile(4);
    }
    apply {
        t.apply();
        p.apply();
    }
}
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
