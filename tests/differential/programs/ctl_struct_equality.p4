/* Struct equality (P4_16 8.12): two structs are equal when every field is, headers in
 * them compared as headers (both invalid counts as equal). p4c expands the comparison
 * field by field for bmv2. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> type; }
header tag_t { bit<8> v; }
struct key_t { bit<8> a; bit<16> b; tag_t t; }
struct headers { ethernet_t eth; tag_t tag; }
struct metadata { key_t k1; key_t k2; }

parser P(packet_in pkt, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.eth);
        transition select(h.eth.type) { 0x0900: tag; default: accept; }
    }
    state tag { pkt.extract(h.tag); transition accept; }
}
control VC(inout headers h, inout metadata m) { apply { } }
control I(inout headers h, inout metadata m, inout standard_metadata_t sm) {
    apply {
        m.k1.a = h.eth.dst[7:0];
        m.k1.b = h.eth.type;
        m.k1.t = h.tag;
        m.k2 = { 8w2, 16w0x0900, h.tag };
        sm.egress_spec = 3;
        if (m.k1 == m.k2) {
            sm.egress_spec = 1;
        } else if (m.k1 != m.k2) {
            m.k2 = { 8w5, 16w0x0800, h.tag };
            if (m.k1 != m.k2) {
                sm.egress_spec = 2;
            }
        }
    }
}
control E(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout metadata m) { apply { } }
control D(packet_out pkt, in headers h) { apply { pkt.emit(h.eth); pkt.emit(h.tag); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
