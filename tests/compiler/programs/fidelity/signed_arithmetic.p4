// int<8> arithmetic wraps in two's complement; signed compare and shift; sign extension by cast
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; bit<8> c; bit<8> d; bit<8> e; bit<8> f; }
struct headers { h_t h; }
struct meta_t { }
parser P(packet_in pkt, out headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control V(inout headers hdr, inout meta_t m) { apply { } }
control I(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        int<8> x = (int<8>)hdr.h.a;
        int<8> y = 8s100;
        hdr.h.b = (bit<8>)(x + y);
        hdr.h.c = (x < 8s0) ? 8w1 : 8w0;
        hdr.h.d = (bit<8>)(x >> 1);
        int<16> w = (int<16>)x;
        hdr.h.e = (bit<8>)(w >> 8);
        hdr.h.f = (bit<8>)(x * 8s3);
        sm.egress_spec = 1;
    }
}
control E(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
