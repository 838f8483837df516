/* Signed literals and int<N> arithmetic wrap modulo 2^N (two's complement). */
#include <core.p4>
#include <v1model.p4>

header h_t { int<8> a; int<8> b; int<8> c; int<8> d; int<8> e; bit<8> f; int<8> g; }
struct headers { h_t h; }
struct metadata { }

parser P(packet_in pkt, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.h); transition accept; }
}
control VC(inout headers h, inout metadata m) { apply { } }
control I(inout headers h, inout metadata m, inout standard_metadata_t sm) {
    const int<8> K = 8s200;
    apply {
        h.h.a = 8s200;              // -56 = 0xc8
        h.h.b = h.h.b + 8s100;      // 0x64 + 0x64 = 0xc8 (-56)
        h.h.c = -8s128;             // wraps to -128 = 0x80
        h.h.d = K;                  // 0xc8
        h.h.e = h.h.e * 8s2;        // 0x7f * 2 = 0xfe
        h.h.f = (bit<8>)(-8s1);     // 0xff
        h.h.g = (int<8>)9w300;      // 300 mod 512 -> bit<9> 0x12c -> low 8: 0x2c
        sm.egress_spec = 1;
    }
}
control E(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control C(inout headers h, inout metadata m) { apply { } }
control D(packet_out pkt, in headers h) { apply { pkt.emit(h.h); } }
V1Switch(P(), VC(), I(), E(), C(), D()) main;
