// Compound assignment evaluates its target once (P4_16 8.13.1): a call in an index of
// the target runs once, and before the right-hand side.
#include <core.p4>
#include <v1model.p4>
header c_t { bit<8> i; bit<16> f; }
header w_t { bit<16> x; }
struct headers { c_t c; w_t[4] w; }
struct meta_t { }
bit<8> bump(inout bit<8> x) {
    bit<8> r = x;
    x = x + 1;
    return r;
}
parser P(packet_in pkt, out headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.c);
        pkt.extract(hdr.w.next);
        pkt.extract(hdr.w.next);
        pkt.extract(hdr.w.next);
        pkt.extract(hdr.w.next);
        transition accept;
    }
}
control V(inout headers hdr, inout meta_t m) { apply { } }
control I(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        hdr.w[bump(hdr.c.i) & 3].x |= hdr.c.f;
        hdr.w[bump(hdr.c.i) & 3].x[7:0] += 0x11;
        hdr.w[bump(hdr.c.i) & 3].x += (bit<16>)bump(hdr.c.i);
        sm.egress_spec = 1;
    }
}
control E(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.c); pkt.emit(hdr.w); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
