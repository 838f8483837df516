// Sub-parsers (P4_16 spec 12.9 "invoking sub-parsers"): a parser instantiated in
// another parser and applied in a state, twice, with a local of its own, an out
// argument read after the call, statements after the call in the same state, and
// reject inside the sub-parser ending the whole parse (bmv2 then drops nothing here:
// v1model continues to ingress with parser_error set, so the ingress sends such
// packets to port 3). A sub-parser that rejects copies nothing out (P4_16 6.8: out and
// inout arguments are copied back when it returns, at accept; p4c's parser inliner
// copies them in the state after the sub-parser's accept, as the two applies here pass
// different arguments; with the same arguments it binds them directly:
// fe_subparser_direct_args).
#include <core.p4>
#include <v1model.p4>

header tag_t { bit<8> kind; bit<8> val; }
header h_t { bit<8> a; }
struct headers_t { tag_t t0; tag_t t1; h_t h; }
struct meta_t { bit<8> sum; bit<8> n; }

error { BadKind }

parser TagParser(packet_in pkt, out tag_t tag, inout bit<8> sum) {
    bit<8> seen;
    state start {
        pkt.extract(tag);
        seen = tag.val;
        transition select(tag.kind) {
            1: ok;
            default: reject;
        }
    }
    state ok {
        sum = sum + seen;
        transition accept;
    }
}

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta,
         inout standard_metadata_t sm) {
    TagParser() tp;
    state start {
        meta.sum = 0;
        tp.apply(pkt, hdr.t0, meta.sum);
        meta.n = 1;
        tp.apply(pkt, hdr.t1, meta.sum);
        meta.n = meta.n + 1;
        transition select(meta.sum) {
            8w0xff: accept;
            default: last;
        }
    }
    state last {
        pkt.extract(hdr.h);
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) { apply { } }

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        if (sm.parser_error != error.NoError) {
            sm.egress_spec = 3;
        } else {
            hdr.h.a = meta.sum + meta.n;
            sm.egress_spec = 2;
        }
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { }
}

control CC(inout headers_t hdr, inout meta_t meta) { apply { } }

control D(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.t0); pkt.emit(hdr.t1); pkt.emit(hdr.h); }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
