// Compound assignment operators (P4_16 1.2.x): += -= *= &= |= ^= <<= >>= |+|= |-|=
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; bit<8> c; bit<8> d; bit<8> e;
             bit<8> f; bit<8> g; bit<8> h; bit<8> i; bit<8> j; }
struct headers { h_t h; }
struct meta_t { }
parser P(packet_in pkt, out headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control V(inout headers hdr, inout meta_t m) { apply { } }
control I(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        hdr.h.a += 3;
        hdr.h.b -= 5;
        hdr.h.c *= 3;
        hdr.h.d &= 0x0f;
        hdr.h.e |= 0x80;
        hdr.h.f ^= 0xff;
        hdr.h.g <<= 2;
        hdr.h.h >>= 1;
        hdr.h.i |+|= 200;
        hdr.h.j |-|= 50;
        sm.egress_spec = 1;
    }
}
control E(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
