/* for loops (P4_16 1.2.5): `for (x in tuple)` takes each component in turn; a loop
 * variable declared without a value (`for (bit<8> i; ...)`), an annotation on a
 * for-in variable, a function call as the update, break in a range loop. */
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; bit<8> c; bit<8> d; }
struct headers { h_t h; }
struct metadata { }
void bump(inout bit<8> i, in bit<8> by) { i = i + by; }
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control Ig(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        tuple<bit<8>, bit<8>, bit<8>> t = { hdr.h.a, 8w2, 8w3 };
        bit<8> sum = 0;
        for (bit<8> x in t) { sum = sum + x; }
        hdr.h.a = sum;
        bit<8> n = 0;
        for (bit<8> i; n < 2;) { n = n + 1; }
        for (@my_anno bit<8> k in 1 .. 5) {
            if (k == 3) { break; }
            hdr.h.b = hdr.h.b + k;
        }
        for (bit<8> j = 0; j < 10; bump(j, 4)) { hdr.h.c = hdr.h.c + 1; }
        hdr.h.d = n;
    }
}
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
