/* Arithmetic by constants that p4c's mid end strength-reduces (x / 1, x / 2^k,
 * x % 2^k, x * 2^k, x + 0): the results are the spec's unsigned bit<W> arithmetic
 * (8.5: multiplication wraps modulo 2^W; / and % on unsigned values). */
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; bit<8> c; bit<8> d; }
struct headers { h_t h; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }

control Ig(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        hdr.h.b = hdr.h.a / 8w4;
        hdr.h.c = hdr.h.a % 8w8 + 8w0;
        hdr.h.d = hdr.h.a * 8w2;
        hdr.h.a = hdr.h.a / 8w1;
    }
}

control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
