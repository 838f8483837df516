/* Comparing a struct, tuple or header with a list or struct expression (P4_16 8.12,
 * 8.26): the literal takes the other operand's type; a header literal is valid, so an
 * invalid header never equals one. p4c expands the comparison field by field. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> type; }
header pair_t { bit<8> a; bit<8> b; }
struct S { bit<8> a; bit<8> b; }
struct N { S s; bit<8> c; }
struct headers { ethernet_t eth; pair_t p1; pair_t p2; }
struct metadata { S s; N n; }

parser P(packet_in pkt, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.eth);
        transition select(h.eth.type) { 0x0001: one; default: accept; }
    }
    state one { pkt.extract(h.p1); pkt.extract(h.p2); transition accept; }
}
control VC(inout headers h, inout metadata m) { apply { } }
control I(inout headers h, inout metadata m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        bit<8> r = 0;
        m.s.a = h.eth.dst[15:8];
        m.s.b = h.eth.dst[7:0];
        m.n = { m.s, h.eth.src[7:0] };
        tuple<bit<8>, bit<8>> t = { m.s.a, m.s.b };
        if (m.s == { 8w1, 8w2 }) { r = r | 1; }
        if (m.s != { a = 8w1, b = 8w3 }) { r = r | 2; }
        if (m.n == { { 8w1, 8w2 }, 8w9 }) { r = r | 4; }
        if (t == { 8w1, 8w2 }) { r = r | 8; }
        if (m.s == (S){ a = 1, b = 2 }) { r = r | 16; }
        if (h.p1 == h.p2) { r = r | 32; }
        if (m.s == { b = 2, a = 1 }) { r = r | 64; }
        h.eth.src[15:8] = r;
        bit<8> q = 0;
        if (h.p1 == { 8w1, 8w2 }) { q = q | 1; }
        if ({ a = 8w3, b = 8w4 } != h.p2) { q = q | 2; }
        h.eth.src[23:16] = q;
    }
}
control E(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout metadata m) { apply { } }
control D(packet_out pkt, in headers h) {
    apply { pkt.emit(h.eth); pkt.emit(h.p1); pkt.emit(h.p2); }
}
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
