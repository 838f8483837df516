// Function calls (P4_16 6.8, 10): a function whose body is one `return` passes its
// own parameter on to another function; a function called as a statement has no
// effect but its arguments' (the argument here is a function that writes an inout
// parameter, so that write happens); functions in parser locals and parser states.
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<16> b; bit<16> c; bit<8> d; }
struct headers { h_t h; }
struct meta_t { bit<16> from_parser; }
bit<16> incr(in bit<16> x) { return x + 1; }
bit<16> twoxplus1(in bit<16> x) { return x + incr(x); }
bit<16> ignored(in bit<16> x) { return 16w4; }
bit<16> count_up(inout bit<8> n) { n = n + 1; return 16w9; }
parser P(packet_in pkt, out headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    bit<16> port1 = incr((bit<16>) sm.ingress_port);
    state start {
        pkt.extract(hdr.h);
        m.from_parser = port1;
        transition accept;
    }
}
control V(inout headers hdr, inout meta_t m) { apply { } }
control I(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    action act() {
        ignored(16w5);
        ignored(count_up(hdr.h.d));
    }
    apply {
        hdr.h.b = twoxplus1(hdr.h.b);
        ignored(ignored(hdr.h.b));
        act();
        hdr.h.c = m.from_parser;
        sm.egress_spec = 1;
    }
}
control E(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
