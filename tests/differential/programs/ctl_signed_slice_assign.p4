/* An assignment to a slice of an int<W> (`v[15:8] = b`) leaves a negative value when
 * the sign bit is set: p4c's RemoveLeftSlices computes it in the signed type, so
 * bmv2 holds it negative. Without that, bmv2 keeps 0x9234 positive in the signed
 * field and `v >> 4` shifts in zeros. In an apply block and in a parser state. */
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> op; bit<8> a; bit<8> b; bit<16> r; }
struct H { h_t h; }
struct M { int<16> pv; }
parser p(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start {
        pk.extract(hdr.h);
        m.pv = 0;
        m.pv[7:0] = hdr.h.a;
        m.pv[15:8] = hdr.h.b;
        transition accept;
    }
}
control ingress(inout H hdr, inout M m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        int<16> v = 0;
        v[7:0] = hdr.h.a;
        v[15:8] = hdr.h.b;
        if (hdr.h.op == 1) { hdr.h.r = (bit<16>)(v >> 4); }
        else if (hdr.h.op == 2) { hdr.h.r = v < 0 ? 16w1 : 16w0; }
        else if (hdr.h.op == 3) { hdr.h.r = (bit<16>)(m.pv >> 8); }
        else if (hdr.h.op == 4) { v[3:0] = 4w0xf; hdr.h.r = (bit<16>)(v >> 4); }
    }
}
control egress(inout H hdr, inout M m, inout standard_metadata_t sm) { apply {} }
control vrfy(inout H hdr, inout M m) { apply {} }
control upd(inout H hdr, inout M m) { apply {} }
control dep(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); } }
V1Switch(p(), vrfy(), ingress(), egress(), upd(), dep()) main;
