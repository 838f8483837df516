/* A cast in a checksum's field list (`(bit<32>)hdr.h.len` in update_checksum, as in a
 * pseudo-header's upper-layer length): p4c's back end writes the field itself there (its
 * ExpressionConverter treats casts as no-ops), which bmv2 sums like the spec's 32-bit
 * value when the zero padding is whole 16-bit words of a csum16. We refused the list. */
#include <core.p4>
#include <v1model.p4>

header h_t { bit<16> len; bit<8> proto; bit<16> csum; }
struct headers { h_t h; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}

control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply { sm.egress_spec = 1; }
}

control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control V(inout headers hdr, inout metadata meta) { apply { } }

control C(inout headers hdr, inout metadata meta) {
    apply {
        update_checksum(hdr.h.isValid(), { (bit<32>)hdr.h.len, 24w0, hdr.h.proto },
                        hdr.h.csum, HashAlgorithm.csum16);
    }
}

control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), V(), I(), E(), C(), D()) main;
