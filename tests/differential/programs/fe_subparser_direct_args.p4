/* A sub-parser applied with the same arguments everywhere, none aliasing another, works
 * on the arguments themselves: p4c's GeneralInliner (frontends/p4/inlining.cpp,
 * inline_subst) substitutes each such argument for its parameter instead of a copy. So
 * what the sub-parser extracted before it rejects stays in the caller's headers (and is
 * emitted), where a copy would have kept it. The headers of an `out` argument are still
 * made invalid at the apply (DoResetHeaders), and an argument that overlaps another
 * (inst `pair` below: a struct and one of its headers) gets a copy, copied out only at
 * accept. Found with a public TCP-options parser whose padding extract fails on purpose.
 */
#include <core.p4>
#include <v1model.p4>

header b_t { bit<8> v; }
struct pair_t { b_t a; b_t b; }
struct headers { b_t first; b_t[3] vec; pair_t pair; b_t tail; }
struct metadata { }

parser Opts(packet_in pkt, in bit<8> n, out b_t[3] vec) {
    state start {
        transition select(n) {
            0: accept;
            default: one;
        }
    }
    state one {
        pkt.extract(vec.next);
        transition select(vec.last.v) {
            0xff: reject;
            0: accept;
            default: one;
        }
    }
}

parser Pair(packet_in pkt, inout pair_t p, out b_t h) {
    state start {
        pkt.extract(p.a);
        h.setValid();
        h.v = p.a.v + 1;
        transition select(p.a.v) {
            0xee: reject;
            default: accept;
        }
    }
}

parser P(packet_in pkt, out headers hdr, inout metadata meta,
         inout standard_metadata_t sm) {
    Opts() opts;
    Pair() pair;
    state start {
        pkt.extract(hdr.first);
        opts.apply(pkt, hdr.first.v, hdr.vec);
        transition select(hdr.first.v) {
            0x10: with_pair;
            default: tail;
        }
    }
    state with_pair {
        pair.apply(pkt, hdr.pair, hdr.pair.b);
        transition tail;
    }
    state tail {
        pkt.extract(hdr.tail);
        transition accept;
    }
}

control VC(inout headers hdr, inout metadata meta) { apply { } }
control Ing(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply { sm.egress_spec = sm.parser_error == error.NoError ? 9w2 : 9w3; }
}
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control Dep(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }

V1Switch(P(), VC(), Ing(), Eg(), CC(), Dep()) main;
