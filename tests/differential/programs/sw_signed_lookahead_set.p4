/* A parser `set` of an int<8> field from a lookahead of its width extracts the
 * bytes into the field, as bmv2's ParserOpSet<ParserLookAhead> does: 0xfe is -2
 * (negative, `>> 1` is -1), not 254 as for a value assigned from an action
 * parameter or a register (sw_signed_field_unsigned_value). */
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> op; bit<8> a; bit<8> b; bit<8> c; }
struct H { h_t h; }
struct M { int<8> s; int<8> t; }
parser p(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start {
        m.s = pk.lookahead<int<8>>();
        m.t = (int<8>)pk.lookahead<bit<8>>();
        pk.extract(hdr.h);
        transition accept;
    }
}
control ingress(inout H hdr, inout M m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        hdr.h.b = m.s < 0 ? 8w1 : 8w0;
        hdr.h.c = (bit<8>)(m.s >> 1);
        hdr.h.a = m.t < 0 ? 8w1 : 8w0;
    }
}
control egress(inout H hdr, inout M m, inout standard_metadata_t sm) { apply {} }
control vrfy(inout H hdr, inout M m) { apply {} }
control upd(inout H hdr, inout M m) { apply {} }
control dep(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); } }
V1Switch(p(), vrfy(), ingress(), egress(), upd(), dep()) main;
