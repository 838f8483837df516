/* An action called from another action with constant arguments (P4_16 spec 14.1:
 * `in` and directionless parameters are copied in) computes with those constants:
 * `n - 1` with n = 2 is 1 (bit<8> arithmetic is modulo 2^8, spec 8.5), and
 * `n & 0x100` on bit<16> keeps only bit 8 (so 2 & 0x100 is 0). */
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; bit<16> c; bit<16> d; }
struct headers { h_t h; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }

control Ig(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action compute(bit<8> n, bit<16> w) {
        hdr.h.a = n - 1;
        hdr.h.b = n + 8w0xfe;
        hdr.h.c = w & 16w0x100;
        hdr.h.d = w & 16w0x0ff;
    }
    action small() { compute(2, 16w2); }
    action large() { compute(8w0x81, 16w0x1ff); }
    table t {
        key = { hdr.h.a : exact; }
        actions = { small; large; }
        const entries = {
            8w1 : small();
            8w2 : large();
        }
    }
    apply {
        sm.egress_spec = 1;
        t.apply();
    }
}

control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
