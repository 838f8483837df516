#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; bit<8> c; bit<8> d; }
struct headers_t { h_t h; }
struct meta_t { }
parser P(packet_in pkt, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t m) { apply { } }
control I(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        // P4_16 7.2.7 / 8.x: the right-hand side is evaluated before the assignment,
        // so a tuple assigned a permutation of its own elements swaps them.
        tuple<bit<8>, bit<8>> t = {hdr.h.a, hdr.h.b};
        t = {t[1], t[0]};
        hdr.h.a = t[0];
        hdr.h.b = t[1];
        tuple<bit<8>, tuple<bit<8>, bit<8>>> u = {1, {hdr.h.c, hdr.h.d}};
        u[1] = {u[1][1], u[1][0]};
        hdr.h.c = u[1][0];
        hdr.h.d = u[1][1];
        sm.egress_spec = 1;
    }
}
control E(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
