/* Header unions in the style of p4c's issue561 tests: union members and the union's
 * isValid() as table keys (a union's validity is computed into a key temporary),
 * member validity after extract, a union stack element assigned whole (per member, as
 * p4c's CopyStructures: bmv2's assign_union copies unread fields as 0). */
#include <core.p4>
#include <v1model.p4>
header S { bit<8> t; }
header O1 { bit<8> data; }
header O2 { bit<16> data; }
header_union U { O1 byte; O2 short; }
struct headers { S base; U u; U[2] us; }
struct metadata { }
parser ParserImpl(packet_in packet, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        packet.extract(hdr.base);
        transition select(hdr.base.t) { 0: p1; 1: p2; 2: p3; default: accept; }
    }
    state p1 { packet.extract(hdr.u.byte); transition accept; }
    state p2 { packet.extract(hdr.u.short); transition accept; }
    state p3 { packet.extract(hdr.us[0].byte); packet.extract(hdr.us[1].short); transition accept; }
}
control ingress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action set(bit<8> v) { hdr.base.t = v; }
    table debug_hdr {
        key = {
            hdr.base.t : exact;
            hdr.u.short.isValid() : exact;
            hdr.u.byte.isValid() : exact;
            hdr.u.isValid() : exact;
        }
        actions = { set; NoAction; }
        const entries = {
            (0, false, true, true) : set(0x10);
            (1, true, false, true) : set(0x20);
        }
        default_action = NoAction();
    }
    apply {
        sm.egress_spec = 1;
        debug_hdr.apply();
        if (hdr.u.short.isValid()) { hdr.u.short.data = 16w0xffff; }
        else if (hdr.u.byte.isValid()) { hdr.u.byte.data = 8w0xff; }
        if (hdr.us[1].isValid()) { hdr.us[0] = hdr.us[1]; }
        if (hdr.u == hdr.u) { hdr.base.t = hdr.base.t + 1; }
    }
}
control egress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control DeparserImpl(packet_out packet, in headers hdr) { apply { packet.emit(hdr); } }
control verifyChecksum(inout headers hdr, inout metadata meta) { apply { } }
control computeChecksum(inout headers hdr, inout metadata meta) { apply { } }
V1Switch(ParserImpl(), verifyChecksum(), ingress(), egress(), computeChecksum(), DeparserImpl()) main;
