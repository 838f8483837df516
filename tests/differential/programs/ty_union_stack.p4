/* Stacks of header unions (P4_16 8.20): `U[2] opts` has two unions `opts[0]`,
 * `opts[1]`; each element keeps at most one valid member, `isValid()` of an element
 * is true when one member is, and emitting the stack emits every valid member in
 * order. Elements are reached by constant indices, or `.next` in extract (bmv2 JSON
 * `header_union_stacks`, extract type `union_stack`). */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> type; }
header short_t { bit<8> v; }
header long_t { bit<16> v; }
header_union opt_u { short_t s; long_t l; }
struct headers { ethernet_t eth; opt_u[2] opts; }
struct metadata { }

parser P(packet_in pkt, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.eth);
        transition select(h.eth.type) {
            0x0001: one_short;
            0x0002: short_long;
            default: accept;
        }
    }
    state one_short { pkt.extract(h.opts[0].s); transition accept; }
    state short_long { pkt.extract(h.opts.next.s); pkt.extract(h.opts.next.l); transition accept; }
}
control VC(inout headers h, inout metadata m) { apply { } }
control I(inout headers h, inout metadata m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (!h.opts[1].isValid()) {
            // a short second option after the first
            h.opts[1].s.setValid();
            h.opts[1].s.v = h.opts[0].isValid() ? h.opts[0].s.v + 1 : 8w1;
        } else {
            // replace the long second option by a short one: the long one goes away
            h.opts[1].s.setValid();
            h.opts[1].s.v = 0xee;
        }
        if (!h.opts[0].isValid()) {
            sm.egress_spec = 2;
        }
    }
}
control E(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout metadata m) { apply { } }
control D(packet_out pkt, in headers h) { apply { pkt.emit(h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
