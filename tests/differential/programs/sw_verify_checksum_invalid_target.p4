/* verify_checksum() whose checksum field is in a header that is not valid is skipped,
 * condition true or not, as bmv2's Checksum::verify does ("Skipping checksum
 * verification because target field invalid"): checksum_error stays 0. The embedded
 * switch compared the computed checksum with the invalid header's field (0) and set
 * checksum_error. A valid header's field is verified as before, with and without the
 * payload. */
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> sel; bit<8> a; bit<8> b; bit<8> c; bit<8> err; }
header k_t { bit<16> ck; }
struct H { h_t h; k_t k; k_t kp; }
struct M {}
parser p(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start {
        pk.extract(hdr.h);
        transition select(hdr.h.sel) { 1: k; 2: kp; default: accept; }
    }
    state k { pk.extract(hdr.k); transition accept; }
    state kp { pk.extract(hdr.kp); transition accept; }
}
control vrfy(inout H h, inout M m) {
    apply {
        verify_checksum(true, { h.h.a, h.h.b, h.h.c }, h.k.ck, HashAlgorithm.csum16);
        verify_checksum_with_payload(true, { h.h.a }, h.kp.ck, HashAlgorithm.csum16);
    }
}
control ingress(inout H h, inout M m, inout standard_metadata_t sm) {
    apply { h.h.err = (bit<8>) sm.checksum_error; sm.egress_spec = 1; }
}
control egress(inout H h, inout M m, inout standard_metadata_t sm) { apply {} }
control upd(inout H h, inout M m) { apply {} }
control dep(packet_out pk, in H h) { apply { pk.emit(h.h); pk.emit(h.k); pk.emit(h.kp); } }
V1Switch(p(), vrfy(), ingress(), egress(), upd(), dep()) main;
