/* A slice of a field of a header stack's `.next` written in a parser state (P4_16 8.18:
 * `.next` is the element at nextIndex; 8.6: a slice is an l-value). The element written
 * was made valid before, so its field is well defined and emitted. */
#include <core.p4>
#include <v1model.p4>

header i_t { bit<8> n; }
header e_t { bit<8> v; }
struct headers { i_t i; e_t[2] s; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta,
         inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.i);
        hdr.s[1].setValid();
        hdr.s[1].v = 8w0xa0;
        pkt.extract(hdr.s.next);
        // nextIndex is 1 now: writes bits 3..0 of s[1].v
        hdr.s.next.v[3:0] = hdr.i.n[3:0];
        transition accept;
    }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control Ig(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply { sm.egress_spec = 1; }
}
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }

V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
