/* A header stack's `.next` field as an lvalue in a parser (P4_16 8.18): passed as an
 * `inout` argument to a function and to a sub-parser (copy-in reads `hs.next.f`,
 * copy-out writes it back, P4_16 6.8), and assigned from a lookahead. `.next` is the
 * element at nextIndex, which only extract moves: setValid() on hs[1] leaves it there. */
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> f; }
struct headers { h_t[3] hs; }
struct metadata { }

void add5(inout bit<8> x) { x = x + 5; }

parser Sub(packet_in pkt, inout bit<8> x) {
    state start {
        x = x + pkt.lookahead<bit<8>>();
        transition accept;
    }
}

parser P(packet_in pkt, out headers hdr, inout metadata meta,
         inout standard_metadata_t sm) {
    Sub() sub;
    state start {
        pkt.extract(hdr.hs.next);
        transition select(hdr.hs[0].f) {
            1: calls;
            2: look;
            default: accept;
        }
    }
    state calls {
        hdr.hs[1].setValid();
        hdr.hs[1].f = 1;
        add5(hdr.hs.next.f);
        sub.apply(pkt, hdr.hs.next.f);
        transition accept;
    }
    state look {
        hdr.hs[1].setValid();
        hdr.hs.next.f = pkt.lookahead<bit<8>>();
        transition accept;
    }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control Ig(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply { sm.egress_spec = 1; }
}
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply { }
}
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.hs); } }
V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
