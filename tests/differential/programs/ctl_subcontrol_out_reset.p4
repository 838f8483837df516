/* An `out` argument of a sub-control apply starts with its headers invalid (P4_16 6.8:
 * out parameters are uninitialised; an uninitialised header is invalid), as p4c's inliner
 * resets them at the apply: a header argument the sub-control does not write comes back
 * invalid, and so do the headers of a struct argument it does not set valid, whether the
 * argument is passed directly or through a temporary (an argument aliasing another one). */
#include <core.p4>
#include <v1model.p4>

header b_t { bit<8> v; }
struct pair_t { b_t p; b_t q; }
struct headers { b_t sel; b_t a; pair_t pr; b_t c; }
struct metadata { bit<8> m; }

parser P(packet_in pkt, out headers hdr, inout metadata meta,
         inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.sel);
        pkt.extract(hdr.a);
        pkt.extract(hdr.pr.p);
        pkt.extract(hdr.pr.q);
        pkt.extract(hdr.c);
        transition accept;
    }
}

control Fill(out b_t h, out pair_t pr, in bit<8> k) {
    apply {
        if (k == 2) {
            pr.q.setValid();
            pr.q.v = 0x77;
        }
    }
}

control Copy(out b_t dst, in b_t src) {
    apply { if (src.v == 0x55) { dst = src; } }
}

control VC(inout headers hdr, inout metadata meta) { apply { } }
control Ing(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    Fill() fill;
    Copy() cp;
    apply {
        sm.egress_spec = 1;
        if (hdr.sel.v == 1 || hdr.sel.v == 2) {
            fill.apply(hdr.a, hdr.pr, hdr.sel.v);
        } else {
            cp.apply(hdr.c, hdr.c);
        }
    }
}
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control Dep(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }

V1Switch(P(), VC(), Ing(), Eg(), CC(), Dep()) main;
