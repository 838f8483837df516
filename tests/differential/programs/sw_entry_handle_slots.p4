/* Entry handles and equal priorities, as bmv2 has them: a new entry takes the lowest
 * free slot of its table (its handle carries the slot's version above bit 24, so the
 * entry that reuses a deleted entry's slot gets 1<<24 | slot), and among ternary entries
 * of equal priority the one in the lower slot matches first. A direct counter is read
 * by slot. */
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> k; bit<8> v; }
struct headers { h_t h; }
struct meta {}
parser P(packet_in pk, out headers hdr, inout meta m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control VC(inout headers hdr, inout meta m) { apply {} }
control Ig(inout headers hdr, inout meta m, inout standard_metadata_t sm) {
    action set(bit<8> v) { hdr.h.v = v; sm.egress_spec = 1; }
    direct_counter(CounterType.packets_and_bytes) c;
    table t {
        key = { hdr.h.k : ternary; }
        actions = { set; NoAction; }
        counters = c;
        default_action = NoAction();
    }
    apply { t.apply(); }
}
control Eg(inout headers hdr, inout meta m, inout standard_metadata_t sm) { apply {} }
control CC(inout headers hdr, inout meta m) { apply {} }
control D(packet_out pk, in headers hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
