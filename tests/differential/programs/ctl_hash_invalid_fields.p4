/* A hash's input fields of an invalid header are left out of the hashed data, as
 * bmv2 does for a whole header input; and v1model's crc16_custom / crc32_custom,
 * which bmv2 starts with the standard CRC-16 and CRC-32 parameters (only its
 * runtime CLI changes them). Expected values: CRC-16/ARC (bmv2's crc16) and
 * CRC-32 (zlib's, bmv2's crc32) of the listed bytes, computed independently. */
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> kind; bit<16> b; bit<16> c; bit<16> c2; bit<32> d; }
header o_t { bit<16> v; }
struct headers { h_t h; o_t o; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition select(hdr.h.kind) { 1: opt; default: accept; }
    }
    state opt { pkt.extract(hdr.o); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }

control Ig(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        hash(hdr.h.c, HashAlgorithm.crc16, (bit<16>)0, { hdr.h.b, hdr.o.v }, (bit<32>)65536);
        hash(hdr.h.c2, HashAlgorithm.crc16_custom, (bit<16>)0, { hdr.o.v, hdr.h.b },
             (bit<32>)65536);
        hash(hdr.h.d, HashAlgorithm.crc32_custom, (bit<32>)0, { hdr.h.b }, (bit<64>)4294967296);
        sm.egress_spec = 1;
    }
}
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); pkt.emit(hdr.o); } }
V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
