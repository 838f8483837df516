/* Default values of a control's apply parameters (P4_16 6.8.2 and 14.1: parameters with
 * default values may be left out of a call; named arguments may come in any order): a
 * call may omit trailing `in` parameters, name its arguments, or omit a struct-typed
 * parameter whose default is a list expression. */
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; bit<8> c; bit<8> d; }
struct headers { h_t h; }
struct metadata { }
struct pair_t { bit<8> p; bit<8> q; }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }

control Mix(inout bit<8> x, in bit<8> y = 8w5, in bit<8> z = 8w1) {
    apply { x = (x + y) ^ z; }
}

control AddPair(inout bit<8> d, in pair_t pr = { 8w7, 8w9 }) {
    apply { d = d + pr.p + pr.q; }
}

control Ig(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    Mix() m1;
    Mix() m2;
    Mix() m3;
    AddPair() ap;
    apply {
        sm.egress_spec = 1;
        m1.apply(hdr.h.a);
        m2.apply(hdr.h.b, 8w2);
        m3.apply(z = 8w0x10, x = hdr.h.c);
        ap.apply(hdr.h.d);
    }
}

control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
