/* Stacks of header unions (P4_16 8.20) in a parser and a control: extract into
 * u.next.m, .lastIndex and .last.m.f in a parser (as a select key bmv2's
 * union_stack_field; elsewhere a ?: chain on the last index), push_front/pop_front
 * as bmv2's push/pop on the header_union_stack, which swap whole elements. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> type; }
header opt_a { bit<8> kind; bit<8> v; }
header opt_b { bit<8> kind; bit<16> v; }
header_union opt_u { opt_a a; opt_b b; }
header info_t { bit<8> last_index; bit<8> count; bit<8> last_a; }
struct headers { ethernet_t eth; info_t info; opt_u[3] u; }
struct metadata { bit<8> li; bit<8> la; }

parser P(packet_in pkt, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.eth);
        transition select(h.eth.type) { 0x1234: opts; default: accept; }
    }
    state opts {
        transition select(pkt.lookahead<bit<8>>()) { 1: oa; 2: ob; default: accept; }
    }
    state oa {
        pkt.extract(h.u.next.a);
        m.li = (bit<8>)h.u.lastIndex;
        m.la = h.u.last.a.v + 1;
        transition select(h.u.last.a.v) { 0: accept; default: opts; }
    }
    state ob {
        pkt.extract(h.u.next.b);
        m.li = (bit<8>)h.u.lastIndex;
        transition opts;
    }
}
control VC(inout headers h, inout metadata m) { apply { } }
control I(inout headers h, inout metadata m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        h.info.setValid();
        h.info.last_index = m.li;
        h.info.last_a = m.la;
        if (h.eth.dst[0:0] == 1) {
            h.u.push_front(1);
            h.u[0].a.setValid();
            h.u[0].a.kind = 1;
            h.u[0].a.v = 0xaa;
        } else if (h.eth.dst[1:1] == 1) {
            h.u.pop_front(1);
        } else if (h.eth.dst[2:2] == 1) {
            h.u.push_front(2);
        }
        bit<8> c = 0;
        if (h.u[0].isValid()) { c = c + 1; }
        if (h.u[1].isValid()) { c = c + 1; }
        if (h.u[2].isValid()) { c = c + 1; }
        h.info.count = c;
    }
}
control E(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout metadata m) { apply { } }
control D(packet_out pkt, in headers h) {
    apply { pkt.emit(h.eth); pkt.emit(h.info); pkt.emit(h.u); }
}
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
