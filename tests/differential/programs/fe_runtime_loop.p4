// for loops whose iteration count is known only at run time (P4_16 1.2.5): they cannot
// be unrolled, so bmv2 runs them with _jump/_jump_if_zero inside an action, as p4c does.
// In an action (bound from the packet), nested, with break and continue, in an apply
// block (a synthesized action), and a constant loop too long to unroll.
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> op; bit<8> n; bit<16> acc; bit<32> big; }
struct headers { h_t h; }
struct meta_t { }
parser P(packet_in pkt, out headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control V(inout headers hdr, inout meta_t m) { apply { } }
control I(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    action triangle() {            // acc = 1 + 2 + ... + n
        hdr.h.acc = 0;
        for (bit<8> i = 1; i <= hdr.h.n; i = i + 1) {
            hdr.h.acc = hdr.h.acc + (bit<16>)i;
        }
    }
    action square() {              // acc = n * n, by nested loops
        hdr.h.acc = 0;
        for (bit<8> i = 0; i < hdr.h.n; i = i + 1) {
            for (bit<8> j = 0; j < hdr.h.n; j = j + 1) {
                hdr.h.acc = hdr.h.acc + 1;
            }
        }
    }
    action odd_until_seven() {     // sum of odd i < n, stopping at 7
        hdr.h.acc = 0;
        for (bit<8> i = 0; i < hdr.h.n; i = i + 1) {
            if (i == 7) { break; }
            if (i & 1 == 0) { continue; }
            hdr.h.acc = hdr.h.acc + (bit<16>)i;
        }
    }
    table t {
        key = { hdr.h.op : exact; }
        actions = { triangle; square; odd_until_seven; NoAction; }
        const entries = { 1 : triangle(); 2 : square(); 3 : odd_until_seven(); }
        default_action = NoAction();
    }
    apply {
        sm.egress_spec = 1;
        t.apply();
        if (hdr.h.op == 4) {       // in the apply block: doubling until past n * 256
            hdr.h.acc = 1;
            for (bit<16> k = 1; hdr.h.acc <= (bit<16>)hdr.h.n << 8; k = k + 1) {
                hdr.h.acc = hdr.h.acc << 1;
            }
        }
        if (hdr.h.op == 5) {       // constant, but 3000 iterations: kept as a loop
            hdr.h.big = 0;
            for (bit<16> k = 0; k < 3000; k = k + 1) {
                hdr.h.big = hdr.h.big + 2;
            }
        }
    }
}
control E(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
