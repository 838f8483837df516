/* Header unions assigned whole (P4_16 8.20): u2 = u1 copies every member's validity
 * and fields (bmv2 assign_union), also through structs holding a union copied whole
 * and the whole headers struct saved and restored; a valid header assigned to a
 * member makes that member the valid one, an invalid one leaves nothing valid. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> type; }
header a_t { bit<8> kind; bit<8> v; }
header b_t { bit<8> kind; bit<16> v; }
header_union U { a_t a; b_t b; }
struct headers { ethernet_t eth; U u1; U u2; }
struct box_t { U u; bit<8> tag; }
struct metadata { }

parser P(packet_in pkt, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.eth);
        transition select(pkt.lookahead<bit<8>>()) { 1: pa; 2: pb; default: accept; }
    }
    state pa { pkt.extract(h.u1.a); transition accept; }
    state pb { pkt.extract(h.u1.b); transition accept; }
}
control VC(inout headers h, inout metadata m) { apply { } }
control I(inout headers h, inout metadata m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        bit<8> op = h.eth.dst[7:0];
        if (op == 1) {
            h.u2 = h.u1;                  // whole union: validity and fields of each member
        } else if (op == 2) {
            box_t box = { h.u1, 7 };      // a struct holding a union
            box_t copy = box;             // copied whole
            h.u1.a.setInvalid();
            h.u1.b.setInvalid();
            h.u2 = copy.u;
            h.eth.src[7:0] = copy.tag;
        } else if (op == 3) {
            headers saved = h;            // the whole headers struct, unions included
            h.u1.a.setValid();
            h.u1.a = { 9, 9 };
            h.u2.b.setValid();
            h.u2.b = { 8, 8 };
            h = saved;
        } else if (op == 5) {
            a_t tmp = { 3, 4 };
            h.u1.a = tmp;                 // a valid header into a member: the member is valid
            h.u2 = h.u1;
        } else if (op == 6) {
            a_t none;
            none.setInvalid();
            h.u1.a = none;                // an invalid header into the valid member
            h.u2 = h.u1;
        } else if (op == 4) {
            h.u2.b.setValid();
            h.u2.b = { 2, 0xbbbb };
            h.u2 = h.u1;                  // u1 has a valid: u2.b becomes invalid
        }
    }
}
control E(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout metadata m) { apply { } }
control D(packet_out pkt, in headers h) { apply { pkt.emit(h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
