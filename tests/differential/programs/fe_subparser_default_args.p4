/* Parameters with default values (P4_16 6.8.2) on a sub-parser's apply: left out at the
 * end of a call, or named in any order, they take their defaults; a direct type invocation
 * (`Sub.apply(...)`, 14.1) and an instance apply behave the same. */
#include <core.p4>
#include <v1model.p4>

header b_t { bit<8> v; }
struct headers { b_t a; b_t b; b_t c; }
struct metadata { }

parser Sub(packet_in pkt, out b_t h, in bit<8> add = 8w0x40, in bit<8> mul = 2) {
    state start {
        pkt.extract(h);
        h.v = h.v * mul + add;
        transition accept;
    }
}

parser P(packet_in pkt, out headers hdr, inout metadata meta,
         inout standard_metadata_t sm) {
    Sub() s;
    state start {
        Sub.apply(pkt, hdr.a);
        s.apply(pkt, hdr.b, 8w1);
        s.apply(mul = 8w3, h = hdr.c, pkt = pkt);
        transition accept;
    }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control Ig(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply { sm.egress_spec = 3; }
}
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }

V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
