// Struct/header literals as function arguments, and functions returning a header
// literal (P4_16 spec 8.13 structure-valued expressions, 10.3 functions): a header
// assigned from a list expression becomes valid with those field values (8.17).
#include <core.p4>
#include <v1model.p4>

header o_t { bit<8> a; bit<8> b; bit<16> c; }
struct headers_t { o_t o; o_t n; }
struct S { o_t e; bit<8> x; }
struct meta_t { }

bit<8> pick(S s) { return s.e.b + s.x; }
o_t mk(bit<8> v) { return { v, 8w2, 16w3 }; }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta,
         inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.o); transition accept; }
}

control VC(inout headers_t hdr, inout meta_t meta) { apply { } }

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        hdr.o.a = pick({ { 8w1, 8w5, 16w0 }, 8w10 });
        hdr.n = mk(hdr.o.b);
        sm.egress_spec = 1;
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { }
}

control CC(inout headers_t hdr, inout meta_t meta) { apply { } }

control D(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.o); pkt.emit(hdr.n); }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
