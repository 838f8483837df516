/* A function with a tuple parameter whose body is a single `return`, called with a
 * tuple local or a list expression (`sum2(tp)`, `sum2({hdr.h.b, 1})`): it is inlined
 * with a copy-in temporary, as a longer body is, so the tuple is read by element
 * (p4c turns tuples into structs, EliminateTuples). Substituted into the caller's
 * expression, the tuple stayed a whole value, which bmv2 has no form for. */
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> op; bit<8> a; bit<8> b; bit<8> c; }
struct H { h_t h; }
struct M {}
bit<8> sum2(in tuple<bit<8>, bit<8>> t) { return t[0] + t[1]; }
bit<8> second(in tuple<bit<8>, bit<8>, bool> t) { return t[2] ? t[1] : t[0]; }
bit<8> sum3(in tuple<bit<8>, bit<8>> t) { bit<8> r = t[0]; r = r + t[1]; return r; }
parser p(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control ingress(inout H hdr, inout M m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        tuple<bit<8>, bit<8>> tp = { hdr.h.a, hdr.h.b };
        hdr.h.c = sum2(tp);
        hdr.h.op = sum3(tp) + second({ 0, hdr.h.op, hdr.h.op != 0 });
        hdr.h.a = sum2({ hdr.h.b, 1 });
    }
}
control egress(inout H hdr, inout M m, inout standard_metadata_t sm) { apply {} }
control vrfy(inout H hdr, inout M m) { apply {} }
control upd(inout H hdr, inout M m) { apply {} }
control dep(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); } }
V1Switch(p(), vrfy(), ingress(), egress(), upd(), dep()) main;
