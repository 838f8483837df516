// A list expression cast to a list or tuple type (P4_16 8.12, list<T> since 1.2.4):
// (list<bit<8>>){1, 2, 3} and (tuple<bit<8>, bit<16>>){0x40, 0x1234} give each element
// the element type, as p4c does ((list<bit<32>>){2, 3, 4} becomes {32w2, 32w3, 32w4}).
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; bit<8> c; bit<16> d; }
struct headers { h_t h; }
struct meta_t { }
parser P(packet_in pkt, out headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control Ing(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        list<bit<8>> l = (list<bit<8>>){1, 2, 3};
        tuple<bit<8>, bit<16>> t = (tuple<bit<8>, bit<16>>){0x40, 0x1234};
        hdr.h.a = hdr.h.a + l[0];
        hdr.h.b = l[2];
        hdr.h.c = t[0];
        hdr.h.d = t[1];
        sm.egress_spec = 1;
    }
}
control Eg(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control VC(inout headers hdr, inout meta_t m) { apply { } }
control CC(inout headers hdr, inout meta_t m) { apply { } }
control Dep(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), Dep()) main;
