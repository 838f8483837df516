// for loops (P4_16 1.2.5): index loops with continue, range loops with break, nested loops.
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; bit<8> c; bit<8> d; }
struct headers { h_t h; }
struct meta_t { }
parser P(packet_in pkt, out headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control V(inout headers hdr, inout meta_t m) { apply { } }
control I(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    action sum_skipping_a() {
        bit<8> acc = 0;
        for (bit<8> i = 0; i < 4; i = i + 1) {
            if (i == hdr.h.a) {
                continue;
            }
            acc += i;
        }
        hdr.h.b = acc;
    }
    apply {
        sum_skipping_a();
        bit<8> x = 0;
        for (bit<8> j in 1 .. 10) {
            if (j == 6) {
                break;
            }
            x = x + j;
        }
        hdr.h.c = x;
        hdr.h.d = 0;
        for (bit<8> i = 0; i < 3; i = i + 1) {
            for (bit<8> k = 0; k < 5; k += 1) {
                if (k == 2) { break; }
                hdr.h.d = hdr.h.d + 1;
            }
        }
        sm.egress_spec = 1;
    }
}
control E(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
