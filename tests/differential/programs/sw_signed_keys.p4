/* Table keys and select keys of type int<8> match the field's bytes, as bmv2 does:
 * -1 is 0xff for an exact entry, a select case and a range (0x80..0xff holds the
 * negative values). The entries come from the control plane (a negative constant
 * entry is "-0x01" in p4c's JSON, which simple_switch refuses). */
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> op; bit<8> a; bit<8> b; bit<8> c; bit<8> d; bit<8> e; }
struct H { h_t h; }
struct M { int<8> s; bit<8> tag; }
parser p(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start {
        pk.extract(hdr.h);
        m.s = (int<8>)hdr.h.a;
        transition select(m.s) { -1: minus_one; 5: five; default: accept; }
    }
    state minus_one { m.tag = 1; transition accept; }
    state five { m.tag = 2; transition accept; }
}
control ingress(inout H hdr, inout M m, inout standard_metadata_t sm) {
    action set_b(bit<8> v) { hdr.h.b = v; }
    action set_c(bit<8> v) { hdr.h.c = v; }
    action set_d(bit<8> v) { hdr.h.d = v; }
    table t_exact {
        key = { m.s : exact; }
        actions = { set_b; NoAction; }
        default_action = set_b(0xee);
    }
    table t_range {
        key = { m.s : range; }
        actions = { set_c; NoAction; }
        default_action = set_c(0xee);
    }
    table t_lpm {
        key = { m.s : lpm; }
        actions = { set_d; NoAction; }
        default_action = set_d(0xee);
    }
    apply {
        sm.egress_spec = 1;
        t_exact.apply();
        t_range.apply();
        t_lpm.apply();
        hdr.h.e = m.tag;
    }
}
control egress(inout H hdr, inout M m, inout standard_metadata_t sm) { apply {} }
control vrfy(inout H hdr, inout M m) { apply {} }
control upd(inout H hdr, inout M m) { apply {} }
control dep(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); } }
V1Switch(p(), vrfy(), ingress(), egress(), upd(), dep()) main;
