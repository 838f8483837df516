/* `exit` still performs the copy-out of the out/inout parameters of the enclosing
 * action or control and of all its callers (P4_16 12.5 "exit"; p4c inserts the copy-out
 * before the exit since p4c#2351). Where an argument goes straight to its parameter the
 * writes are in place anyway; these arguments alias each other, so they go through
 * copies, and only the copy-out makes the writes seen. Statements after the exit still
 * do not run: `after` keeps its value.
 *   sel 1: an action with two inout parameters bound to the same field (x, y = a):
 *          x = a + 1, y = a + 2, exit; copy-out in parameter order leaves a + 2.
 *   sel 2: a sub-control with aliasing arguments exits in its apply block.
 *   sel 3: nested: Outer (temporaries for hdr.h and hdr.h.c) applies Inner (temporaries
 *          for hh.b twice), which exits: Inner's copy-out, then Outer's. */
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> sel; bit<8> a; bit<8> b; bit<8> c; bit<8> after; }
struct headers { h_t h; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta,
         inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}

control Inner(inout bit<8> p, inout bit<8> q) {
    apply { p = 0x10; q = 0x20; exit; }
}

control Outer(inout h_t hh, inout bit<8> n) {
    Inner() inner;
    apply {
        hh.b = 0x30;
        inner.apply(hh.b, hh.b);
        n = 0x40;
    }
}

control Two(inout bit<8> x, inout bit<8> y) {
    apply {
        x = 0x51;
        y = 0x52;
        if (x == 0x51) { exit; }
        x = 0x99;
    }
}

control VC(inout headers hdr, inout metadata meta) { apply { } }
control Ing(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action ax(inout bit<8> x, inout bit<8> y) { x = x + 1; y = y + 2; exit; }
    Two() two;
    Outer() outer;
    apply {
        sm.egress_spec = 1;
        if (hdr.h.sel == 1) {
            ax(hdr.h.a, hdr.h.a);
        } else if (hdr.h.sel == 2) {
            two.apply(hdr.h.b, hdr.h.b);
        } else if (hdr.h.sel == 3) {
            outer.apply(hdr.h, hdr.h.c);
        }
        hdr.h.after = 0xff;
    }
}
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control Dep(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }

V1Switch(P(), VC(), Ing(), Eg(), CC(), Dep()) main;
