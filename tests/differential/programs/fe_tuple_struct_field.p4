/* A struct field of a tuple type (P4_16 7.2.8: a struct field may have any type but
 * an extern, a parser or a control; 7.2.7 tuples): user metadata holding
 * tuple<bit<8>, small_t, small_t[2]> and the headers struct holding tuple<h_t, h_t>,
 * elements read and written by constant index (`m.t[0]`, `m.t[1].b`, `m.t[2][1]`),
 * extracted in the parser (`hdr.pair[1]`), the whole field assigned from a list (a
 * swap: both elements are read before either is written) and from another struct's
 * field (through a local copy of the metadata), and emitted with the headers struct;
 * a local struct with a tuple field, whose tuple is a hash's field list.
 * p4c lays such a field out as a struct with fields f0, f1, ... (EliminateTuples);
 * the bmv2 back end refused the metadata ("metadata of type tuple<...> is not
 * supported on bmv2"). */
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
header res_t { bit<8> sum; bit<8> copy; bit<8> v; bit<8> cp; bit<16> hsh; }
header small_t { bit<8> b; }
struct H { tuple<h_t, h_t> pair; res_t res; }
struct M { tuple<bit<8>, small_t, small_t[2]> t; }
struct one_t { bit<8> f; }
struct local_t { tuple<one_t, one_t> two; bit<8> z; }
parser p(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start {
        pk.extract(hdr.pair[0]);
        pk.extract(hdr.pair[1]);
        transition accept;
    }
}
control ingress(inout H hdr, inout M m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        m.t[0] = hdr.pair[0].a + hdr.pair[1].a;
        m.t[1].setValid();
        m.t[1].b = m.t[0];
        m.t[2][1].setValid();
        m.t[2][1].b = m.t[1].b + 1;
        hdr.res.setValid();
        hdr.res.sum = m.t[0];
        hdr.res.copy = m.t[2][1].b;
        hdr.res.v = (m.t[2][0].isValid() ? 8w0x10 : 8w0) | (m.t[2][1].isValid() ? 8w1 : 8w0);
        local_t l = {{{hdr.pair[0].a}, {hdr.pair[1].a}}, 0};
        hash(hdr.res.hsh, HashAlgorithm.identity, 16w0, l.two, 32w65536);
        hdr.pair = {hdr.pair[1], hdr.pair[0]};
        M m2 = m;
        m2.t[1].b = 0x55;
        m.t = m2.t;
        hdr.res.cp = m.t[1].b;
    }
}
control vrfy(inout H hdr, inout M m) { apply { } }
control egress(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control update(inout H hdr, inout M m) { apply { } }
control deparser(packet_out pk, in H hdr) { apply { pk.emit(hdr); } }
V1Switch(p(), vrfy(), ingress(), egress(), update(), deparser()) main;
