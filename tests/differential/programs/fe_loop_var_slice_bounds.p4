/* A loop variable in the bounds of a slice (P4_16 8.6: the bounds must be
 * compile-time known): the loop is unrolled, so in each iteration the variable has a
 * known value, and the slice takes the bits it names (jafingerhut's
 * loop-var-can-be-used-in-slice1). */
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; }
struct headers { h_t h; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta,
         inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control Ig(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        for (bit<8> i = 0; i < 8; i = i + 1) {
            hdr.h.a[i:i] = i[0:0];
        }
        for (bit<8> j in 0 .. 3) {
            hdr.h.b[2 * j + 1 : 2 * j] = j[1:0];
        }
        sm.egress_spec = 1;
    }
}
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
