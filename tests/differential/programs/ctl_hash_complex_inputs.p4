/* Hash inputs that are not fields (bmv2's calculations take fields and constants
 * only; p4c's RemoveComplexExpressions computes the rest into temporaries first):
 * an action parameter given a header field by a direct call (the call's body runs
 * inline, so the field is hashed), a table action's data, and expressions in the
 * apply block. The expected values are CRC-16/ARC (poly 0x8005 reflected, init 0,
 * bmv2's crc16) of the listed bytes, computed independently of both switches. */
#include <core.p4>
#include <v1model.p4>

header h_t { bit<32> a; bit<32> b; bit<16> c; bit<16> d; bit<16> e; }
struct headers { h_t h; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }

control Ig(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action direct_hash(bit<32> x) {
        hash(hdr.h.c, HashAlgorithm.crc16, (bit<16>)0, { x }, (bit<32>)65536);
    }
    action table_hash(bit<32> x) {
        hash(hdr.h.d, HashAlgorithm.crc16, (bit<16>)0, { x, hdr.h.b }, (bit<32>)65536);
    }
    table t {
        key = { hdr.h.a: exact; }
        actions = { table_hash; NoAction; }
        default_action = NoAction();
    }
    apply {
        direct_hash(hdr.h.a);
        t.apply();
        hash(hdr.h.e, HashAlgorithm.crc16, (bit<16>)0, { hdr.h.a + 32w1, (bit<8>)hdr.h.b },
             (bit<32>)65536);
        sm.egress_spec = 1;
    }
}
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
