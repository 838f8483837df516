/* Nested tuples (P4_16 7.2.7: a tuple's element may be any type, a tuple too; 8.11:
 * list expressions nest): a function parameter of a nested tuple type (in, inout, out),
 * a nested tuple local initialised and assigned from nested list expressions, element
 * reads and writes `t[1][0]`, a whole inner tuple assigned `t[1] = {..}`, nested tuples
 * compared with ==/!=, and a nested list as a hash field list (its elements in order).
 * SplitTuples split only one level, so the inner tuple stayed a whole local, which
 * bmv2 has no form for. */
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> op; bit<8> a; bit<8> b; bit<8> c; bit<8> d; bit<8> e; bit<16> w; }
struct H { h_t h; }
struct M {}
typedef tuple<bit<8>, tuple<bit<8>, bit<8>>> pair_in_t;
bit<8> first(in pair_in_t t) { return t[1][0]; }
void swap_inner(inout pair_in_t t) {
    bit<8> x = t[1][0];
    t[1][0] = t[1][1];
    t[1][1] = x;
}
void make(out pair_in_t t, in bit<8> v) { t = {v, {v + 1, v + 2}}; }
parser p(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control ingress(inout H hdr, inout M m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        tuple<bit<8>, tuple<bit<4>, bit<4>>> t = {1, {2, 3}};
        hdr.h.op = t[0] + (bit<8>)(t[1][0] ++ t[1][1]);
        t[1][0] = hdr.h.c[3:0];
        t[1] = {t[1][0], 4w0xf};
        hdr.h.c = t[1][0] ++ t[1][1];
        hdr.h.a = first({0, {hdr.h.b, 9}});
        pair_in_t u = {hdr.h.a, {hdr.h.b, hdr.h.d}};
        swap_inner(u);
        hdr.h.b = u[1][0];
        hdr.h.d = u[1][1];
        pair_in_t v;
        make(v, hdr.h.e);
        hdr.h.e = v[0] + v[1][0] + v[1][1];
        if (u == {hdr.h.a, {hdr.h.b, hdr.h.d}} && v != {0x80, {0x81, 0x82}}) {
            hash(hdr.h.w, HashAlgorithm.identity, 16w0, {hdr.h.op, {hdr.h.c}}, 32w65536);
        }
    }
}
control egress(inout H hdr, inout M m, inout standard_metadata_t sm) { apply {} }
control vrfy(inout H hdr, inout M m) { apply {} }
control upd(inout H hdr, inout M m) { apply {} }
control dep(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); } }
V1Switch(p(), vrfy(), ingress(), egress(), upd(), dep()) main;
