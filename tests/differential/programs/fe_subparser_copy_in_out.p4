/* A sub-parser's parameters are copied in at its apply and copied out when it reaches
 * accept (P4_16 6.8 copy-in/copy-out, 13.8.1), as p4c's parser inliner does: an `out`
 * argument starts with its headers invalid (the caller's header the sub-parser does not
 * extract comes back invalid), and a sub-parser that rejects copies nothing out (what it
 * extracted or changed stays in its own copies; the caller's arguments keep their values).
 * The sub-parser is applied twice (two states) with different arguments: that is what
 * makes p4c copy (its GeneralInliner binds a parameter to the argument itself when every
 * apply passes the same arguments and they do not alias; fe_subparser_direct_args). */
#include <core.p4>
#include <v1model.p4>

header b_t { bit<8> v; }
struct headers { b_t sel; b_t x; b_t tag; b_t y; }
struct metadata { }

parser Sub(packet_in pkt, out b_t x, out b_t y, inout b_t io, in bit<8> k) {
    state start {
        pkt.extract(y);
        io.v = io.v + k;
        transition select(y.v) {
            0xee: reject;
            default: accept;
        }
    }
}

parser P(packet_in pkt, out headers hdr, inout metadata meta,
         inout standard_metadata_t sm) {
    Sub() sub;
    state start {
        pkt.extract(hdr.sel);
        pkt.extract(hdr.x);
        pkt.extract(hdr.tag);
        transition select(hdr.sel.v) {
            1: one;
            default: two;
        }
    }
    state one {
        sub.apply(pkt, hdr.x, hdr.y, hdr.tag, 1);
        transition accept;
    }
    state two {
        sub.apply(pkt, hdr.x, hdr.y, hdr.tag, hdr.sel.v);
        transition accept;
    }
}

control VC(inout headers hdr, inout metadata meta) { apply { } }
control Ing(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply { sm.egress_spec = (bit<9>)hdr.sel.v; }
}
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control Dep(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }

V1Switch(P(), VC(), Ing(), Eg(), CC(), Dep()) main;
