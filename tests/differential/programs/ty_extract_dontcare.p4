// `pkt.extract<H>(_)`: the don't-care argument extracts (and so skips) an H that the
// program never names (P4_16 spec 6.7 don't-care arguments, 12.8.2 extract).
#include <core.p4>
#include <v1model.p4>

header skip_t { bit<16> s; }
header d_t { bit<8> a; bit<8> b; }
struct headers_t { d_t d; }
struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta,
         inout standard_metadata_t sm) {
    state start {
        pkt.extract<skip_t>(_);
        pkt.extract(hdr.d);
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) { apply { } }

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        hdr.d.a = hdr.d.a + hdr.d.b;
        sm.egress_spec = 1;
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { }
}

control CC(inout headers_t hdr, inout meta_t meta) { apply { } }

// The skipped header is not emitted: the output starts at d.
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.d); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
