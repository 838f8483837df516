// Generic functions (P4_16 1.2.x, 6.8): a function with type parameters is specialised
// per call, its type parameters given explicitly or inferred from the arguments; an
// untyped integer argument takes the type another argument binds.
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; bit<16> c; bit<16> d; bit<8> e; }
struct headers { h_t h; }
struct meta_t { }
T pick<T>(in bool c, in T x, in T y) {
    if (c) { return x; }
    return y;
}
void bump<T>(inout T v, in T by) { v = v + by; }
parser P(packet_in pkt, out headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control V(inout headers hdr, inout meta_t m) { apply { } }
control I(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        hdr.h.b = pick<bit<8>>(hdr.h.a > 4, 8w1, 8w2);
        hdr.h.c = pick(hdr.h.a > 4, hdr.h.c, 16w0xffff);
        hdr.h.e = pick(hdr.h.a == 0, 200, hdr.h.e);
        bump(hdr.h.d, 16w0x0101);
        bump<bit<8>>(hdr.h.a, 255);
        sm.egress_spec = 1;
    }
}
control E(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
