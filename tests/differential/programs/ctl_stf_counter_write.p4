/* STF counter commands with simple_switch_CLI's operands, on an indexed counter and a
 * direct counter: `counter_write C INDEX PACKETS BYTES` (packets first, as the CLI's
 * do_counter_write takes them; on a direct counter INDEX is an entry handle) and
 * `counter_reset C` (a direct counter: every entry of its table). Packets then count
 * on top of the written values. */
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
    counter(4, CounterType.packets_and_bytes) seen;
    direct_counter(CounterType.packets_and_bytes) hits;
    direct_counter(CounterType.packets_and_bytes) marks;
    action fwd(bit<9> port) {
        hits.count();
        sm.egress_spec = port;
    }
    action mark(bit<8> v) {
        marks.count();
        hdr.h.v = v;
    }
    table t {
        key = { hdr.h.k : exact; }
        actions = { fwd; }
        counters = hits;
    }
    table m {
        key = { hdr.h.k : exact; }
        actions = { mark; }
        counters = marks;
    }
    apply {
        seen.count((bit<32>)hdr.h.k);
        t.apply();
        m.apply();
    }
}
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
