/* A select with no matching case and no default: error.NoMatch (P4_16 12.6), the
 * packet going on to ingress. The compiler adds a default to a `noMatch` state, as
 * p4c's HandleNoMatch does: without it real simple_switch accepts with NoError. */
#include <core.p4>
#include <v1model.p4>
header a_t { bit<8> k; }
header o_t { bit<8> perr; }
struct H { a_t a; o_t o; }
struct M {}
parser p(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start {
        pk.extract(hdr.a);
        transition select(hdr.a.k) { 1: accept; }
    }
}
control ingress(inout H h, inout M m, inout standard_metadata_t sm) {
    apply {
        h.o.setValid();
        h.o.perr = sm.parser_error == error.NoMatch ? 8w2 :
                   (sm.parser_error == error.NoError ? 8w0 : 8w99);
        sm.egress_spec = 1;
    }
}
control egress(inout H h, inout M m, inout standard_metadata_t sm) { apply {} }
control vrfy(inout H h, inout M m) { apply {} }
control upd(inout H h, inout M m) { apply {} }
control dep(packet_out pk, in H h) { apply { pk.emit(h); } }
V1Switch(p(), vrfy(), ingress(), egress(), upd(), dep()) main;
