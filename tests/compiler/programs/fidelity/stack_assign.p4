/* Whole header stacks and stacks of header unions assigned (P4_16 8.18, 8.20):
 * every element's validity and fields; later changes to the source do not reach the
 * copy. */
#include <core.p4>
#include <v1model.p4>
header S { bit<8> t; }
header O1 { bit<8> data; }
header_union U { O1 byte; S s; }
struct headers { S base; O1[2] a; O1[2] b; U[2] ua; U[2] ub; }
struct metadata { }
parser ParserImpl(packet_in packet, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        packet.extract(hdr.base);
        packet.extract(hdr.a.next); packet.extract(hdr.a.next);
        packet.extract(hdr.ua.next.byte); packet.extract(hdr.ua.next.s);
        transition accept;
    }
}
control ingress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        hdr.b = hdr.a;
        hdr.ub = hdr.ua;
        hdr.a[0].setInvalid();
        hdr.ua[1].s.setInvalid();
    }
}
control egress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control DeparserImpl(packet_out packet, in headers hdr) { apply { packet.emit(hdr); } }
control verifyChecksum(inout headers hdr, inout metadata meta) { apply { } }
control computeChecksum(inout headers hdr, inout metadata meta) { apply { } }
V1Switch(ParserImpl(), verifyChecksum(), ingress(), egress(), computeChecksum(), DeparserImpl()) main;
