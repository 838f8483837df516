/* Header unions: at most one member is valid; setValid() on one member makes the
 * others invalid (P4_16 spec, header unions), and isValid() of the union says
 * whether any member is. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> type; }
header a_t { bit<16> x; }
header b_t { bit<8> y; }
header_union ab_t { a_t a; b_t b; }
struct headers { ethernet_t eth; ab_t u; }
struct metadata { }

parser P(packet_in pkt, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.eth);
        transition select(h.eth.type) {
            0x000a: parse_a;
            0x000b: parse_b;
            default: accept;
        }
    }
    state parse_a { pkt.extract(h.u.a); transition accept; }
    state parse_b { pkt.extract(h.u.b); transition accept; }
}
control VC(inout headers h, inout metadata m) { apply { } }
control I(inout headers h, inout metadata m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        bit<8> r = 0;
        if (h.u.isValid()) { r = r | 0x10; }
        if (h.eth.dst[7:0] == 1 && h.u.a.isValid()) {
            /* a -> b: a becomes invalid */
            h.u.b.setValid();
            h.u.b.y = 0x99;
        }
        if (h.eth.dst[7:0] == 2) {
            h.u.a.setValid();
            h.u.a.x = 0x7777;
        }
        if (h.u.a.isValid()) { r = r | 1; }
        if (h.u.b.isValid()) { r = r | 2; }
        h.eth.src[7:0] = r;
    }
}
control E(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout metadata m) { apply { } }
control D(packet_out pkt, in headers h) { apply { pkt.emit(h.eth); pkt.emit(h.u); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
