/* An extern constructor argument of type bit<32> given as a serializable enum member
 * (P4_16 8.3: the member converts to its value of the underlying type), as in
 * `counter(sizes.COUNTER_SIZE, CounterType.packets)`: the instance's size is the value. */
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> idx; bit<8> val; bit<8> prev; }
struct headers { h_t h; }
struct metadata { }

enum bit<32> sizes {
    COUNTERS = 16,
    SLOTS = 4
}

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }

control Ig(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    counter(sizes.COUNTERS, CounterType.packets) stats;
    register<bit<8>>(sizes.SLOTS) slots;
    apply {
        sm.egress_spec = 1;
        stats.count((bit<32>) hdr.h.idx);
        bit<8> old;
        slots.read(old, (bit<32>) hdr.h.idx);
        slots.write((bit<32>) hdr.h.idx, hdr.h.val);
        hdr.h.prev = old;
    }
}

control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
