/* lookahead<T>() of a struct holding a header stack (P4_16 12.8.3: the next bits of the
 * packet read as a T without moving the cursor; each header in it is valid, 8.17): the
 * select reads the stack's elements, a header copied out of the value is emitted. */
#include <core.p4>
#include <v1model.p4>

header k_t { bit<8> b; }
header e_t { bit<8> v; }
struct peek_t { bit<4> kind; bit<4> pad; e_t[2] es; }
struct headers { k_t k; e_t[2] s; e_t copy; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta,
         inout standard_metadata_t sm) {
    state start {
        peek_t p = pkt.lookahead<peek_t>();
        hdr.copy = p.es[0];
        transition select(p.kind, p.es[1].v) {
            (1, 0xaa): two;
            (1, _): one;
            default: accept;
        }
    }
    state one {
        pkt.extract(hdr.k);
        pkt.extract(hdr.s.next);
        transition accept;
    }
    state two {
        pkt.extract(hdr.k);
        pkt.extract(hdr.s.next);
        pkt.extract(hdr.s.next);
        transition accept;
    }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control Ig(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = hdr.s[1].isValid() ? 9w2 : (hdr.s[0].isValid() ? 9w1 : 9w3);
    }
}
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) {
    apply { pkt.emit(hdr.k); pkt.emit(hdr.s); pkt.emit(hdr.copy); }
}

V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
