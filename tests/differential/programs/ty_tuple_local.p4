// Tuples as locals (P4_16 spec 7.2.7 tuple types, 8.11 list expressions): initialised
// and assigned from list expressions, read by constant index.
#include <core.p4>
#include <v1model.p4>

header o_t { bit<8> a; bit<8> b; bit<16> c; }
struct headers_t { o_t o; }
struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta,
         inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.o); transition accept; }
}

control VC(inout headers_t hdr, inout meta_t meta) { apply { } }

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        tuple<bit<8>, bit<16>> t = { 8w1, 16w2 };
        hdr.o.a = t[0];
        t = { hdr.o.b, 16w5 };
        hdr.o.c = t[1] + (bit<16>)t[0];
        sm.egress_spec = 1;
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { }
}

control CC(inout headers_t hdr, inout meta_t meta) { apply { } }

control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.o); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
