/* A checksum control may apply other controls (P4_16 spec 1.2, 15.1: a control
 * applies an instance, or invokes a control type directly); their verify_checksum /
 * update_checksum calls run as if written in the checksum control itself, in order
 * and with their own conditions. Here the verify control applies an instance, the
 * compute control both an instance and a direct invocation of the same type. */
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; bit<16> csum; }
struct headers { h_t outer; h_t inner; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.outer); pkt.extract(hdr.inner); transition accept; }
}

control VerifyOne(inout h_t h) {
    apply { verify_checksum(h.isValid(), { h.a, h.b }, h.csum, HashAlgorithm.csum16); }
}

control UpdateOne(inout h_t h) {
    apply { update_checksum(h.isValid(), { h.a, h.b }, h.csum, HashAlgorithm.csum16); }
}

control VC(inout headers hdr, inout metadata meta) {
    VerifyOne() check_outer;
    apply { check_outer.apply(hdr.outer); }
}

control Ig(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (sm.checksum_error == 1) {
            hdr.outer.a = 8w0xee;
        }
        if (hdr.outer.b == 8w0xff) {
            hdr.inner.setInvalid();
        }
    }
}

control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }

control CC(inout headers hdr, inout metadata meta) {
    UpdateOne() fix_outer;
    apply {
        fix_outer.apply(hdr.outer);
        UpdateOne.apply(hdr.inner);
    }
}

control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.outer); pkt.emit(hdr.inner); } }

V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
