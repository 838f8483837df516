/* A variable declared inside a parser state (P4_16 13.4: its scope is the state) passed
 * to a sub-parser applied in that state (13.8.1): the sub-parser's states read and write
 * it through its inout parameter (copy-in/copy-out, 6.8). Two states declare a variable of
 * the same name; each is its own. */
#include <core.p4>
#include <v1model.p4>

header b_t { bit<8> v; }
struct pair_t { b_t first; b_t second; }
struct headers { b_t tag; b_t out1; b_t out2; }
struct metadata { }

parser Sub(packet_in pkt, inout pair_t pr) {
    state start {
        pkt.extract(pr.second);
        pr.second.v = pr.second.v + pr.first.v;
        transition accept;
    }
}

parser P(packet_in pkt, out headers hdr, inout metadata meta,
         inout standard_metadata_t sm) {
    Sub() sub;
    state start {
        pkt.extract(hdr.tag);
        transition select(hdr.tag.v) {
            1: one;
            default: other;
        }
    }
    state one {
        pair_t pr;
        pkt.extract(pr.first);
        sub.apply(pkt, pr);
        hdr.out1 = pr.second;
        transition accept;
    }
    state other {
        pair_t pr;
        pr.first.setValid();
        pr.first.v = 8w0x10;
        sub.apply(pkt, pr);
        hdr.out2 = pr.second;
        transition accept;
    }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control Ig(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply { sm.egress_spec = hdr.out1.isValid() ? 9w1 : 9w2; }
}
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }

V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
