/* hs.last read in a parser while the stack is empty: error.StackOutOfBounds (P4_16
 * 12.8.1), not the stack's last slot; statements after it in the state do not run.
 * (Real simple_switch aborts on this program: "stack empty" assertion.) */
#include <core.p4>
#include <v1model.p4>
header T { bit<8> y; }
header op_t { bit<8> a; }
struct H { op_t op; T[2] hs; }
struct M { }
parser p(packet_in b, out H h, inout M m, inout standard_metadata_t sm) {
    state start {
        b.extract(h.op);
        transition select(h.op.a) { 1: fill; default: peek; }
    }
    state fill { b.extract(h.hs.next); transition peek; }
    state peek {
        h.op.a = h.op.a + 0x10;
        bit<8> x = h.hs.last.y;
        h.op.a = x;
        transition accept;
    }
}
control ingress(inout H h, inout M m, inout standard_metadata_t sm) {
    apply {
        if (sm.parser_error == error.StackOutOfBounds) { sm.egress_spec = 3; }
        else { sm.egress_spec = 1; }
    }
}
control vrfy(inout H h, inout M m) { apply {} }
control update(inout H h, inout M m) { apply {} }
control egress(inout H h, inout M m, inout standard_metadata_t sm) { apply {} }
control deparser(packet_out b, in H h) { apply { b.emit(h); } }
V1Switch(p(), vrfy(), ingress(), egress(), update(), deparser()) main;
