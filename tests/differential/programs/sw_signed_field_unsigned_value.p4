/* An int<8> field assigned a value that fits its 8 bits unsigned keeps it: bmv2's
 * Field::export_bytes wraps only values outside [-128, 255], so an action
 * parameter or register cell 0xfe read into an int<8> is 254, not -2 (`< 0` is
 * false, `>> 1` is 0x7f). Only two_comp_mod, which the compiler writes for casts
 * and arithmetic, makes it negative. */
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> op; bit<8> r; bit<8> b; bit<8> s; }
struct H { h_t h; }
struct M { int<8> s; }
parser p(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control ingress(inout H hdr, inout M m, inout standard_metadata_t sm) {
    register<int<8>>(2) ri;
    action set(int<8> v) {
        m.s = v;
        hdr.h.r = m.s < 0 ? 8w1 : 8w0;
        hdr.h.b = (bit<8>)(m.s >> 1);
    }
    table t {
        key = { hdr.h.op : exact; }
        actions = { set; NoAction; }
        default_action = NoAction();
    }
    apply {
        sm.egress_spec = 1;
        t.apply();
        if (hdr.h.op == 3) { ri.write(1, (int<8>)hdr.h.s); }
        int<8> y;
        ri.read(y, 1);
        if (hdr.h.op >= 3) {
            hdr.h.r = y < 0 ? 8w1 : 8w0;
            hdr.h.b = (bit<8>)(y >> 1);
        }
        if (hdr.h.op == 5) {
            int<8> z = y + 0;  // arithmetic goes through two_comp_mod: negative again
            hdr.h.r = z < 0 ? 8w1 : 8w0;
            hdr.h.b = (bit<8>)(z >> 1);
        }
    }
}
control egress(inout H hdr, inout M m, inout standard_metadata_t sm) { apply {} }
control vrfy(inout H hdr, inout M m) { apply {} }
control upd(inout H hdr, inout M m) { apply {} }
control dep(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); } }
V1Switch(p(), vrfy(), ingress(), egress(), upd(), dep()) main;
