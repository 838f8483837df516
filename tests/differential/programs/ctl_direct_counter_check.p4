/* A direct counter read back with STF's check_counter: for a counter bound to a table
 * (`counters = c`), the index is the entry's handle (0, 1, ... in the order the entries
 * were added), as simple_switch_CLI's counter_read takes it for a direct counter.
 * Each hit counts one packet and its bytes on its own entry; a miss counts nowhere. */
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
    action fwd(bit<9> port, bit<8> v) {
        hits.count();
        sm.egress_spec = port;
        hdr.h.v = v;
    }
    action drop() {
        hits.count();
        mark_to_drop(sm);
    }
    table t {
        key = { hdr.h.k : exact; }
        actions = { fwd; drop; }
        default_action = drop();
        counters = hits;
    }
    apply { t.apply(); }
}
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
