/* A table key that applies another table (`sub.apply().hit`, p4c issue 2362):
 * the key is computed just before the table is applied, so `sub` runs first. */
#include <core.p4>
#include <v1model.p4>
header e_t { bit<8> k; bit<8> o; }
struct H { e_t e; }
struct M { }
parser p(packet_in pkt, out H h, inout M m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.e); transition accept; }
}
control ingress(inout H h, inout M m, inout standard_metadata_t sm) {
    action seto(bit<8> v) { h.e.o = v; }
    table sub { key = { h.e.k: exact; } actions = { NoAction; } default_action = NoAction(); }
    table t { key = { sub.apply().hit: exact @name("subhit"); } actions = { seto; NoAction; } default_action = NoAction(); }
    apply { sm.egress_spec = 1; t.apply(); }
}
control vrfy(inout H h, inout M m) { apply {} }
control update(inout H h, inout M m) { apply {} }
control egress(inout H h, inout M m, inout standard_metadata_t sm) { apply {} }
control deparser(packet_out b, in H h) { apply { b.emit(h); } }
V1Switch(p(), vrfy(), ingress(), egress(), update(), deparser()) main;
