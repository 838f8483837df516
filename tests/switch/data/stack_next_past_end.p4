/* hs.next read in a select once the stack is full: error.StackOutOfBounds (P4_16
 * 12.8.1), and in v1model the packet goes on to ingress with the headers extracted so
 * far. (Real simple_switch aborts on this program: std::out_of_range.) */
#include <core.p4>
#include <v1model.p4>
header T { bit<32> y; }
struct H { T[2] hs; }
struct M { }
parser p(packet_in b, out H h, inout M m, inout standard_metadata_t sm) {
    state start {
        b.extract(h.hs.next);
        transition select(h.hs.next.y) { 0: start; default: accept; }
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
