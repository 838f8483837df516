// pkt.lookahead<H>() of a header type, with a field of the result used inside larger
// expressions: an assignment's operand, a select key, and an extract's varbit length.
// P4_16 spec 12.8.4 (lookahead does not advance the cursor).
#include <core.p4>
#include <v1model.p4>

header look_t { bit<8> len; bit<8> kind; }
header d_t { bit<8> a; bit<8> b; }
header v_t { varbit<32> opts; }
struct headers_t { d_t d; v_t v; }
struct meta_t { bit<8> x; }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta,
         inout standard_metadata_t sm) {
    state start {
        meta.x = pkt.lookahead<look_t>().len + 8w1;
        transition select(pkt.lookahead<look_t>().kind & 8w0x0f) {
            1: one;
            default: accept;
        }
    }
    state one {
        pkt.extract(hdr.d);
        // options: hdr.d.b's low nibble counts bytes; the lookahead reads the next header
        pkt.extract(hdr.v, (bit<32>)(8 * (bit<9>)(pkt.lookahead<look_t>().len & 8w3)));
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) { apply { } }

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        if (hdr.d.isValid()) {
            hdr.d.a = meta.x;
            sm.egress_spec = 2;
        } else {
            sm.egress_spec = 3;
        }
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { }
}

control CC(inout headers_t hdr, inout meta_t meta) { apply { } }

control D(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.d); pkt.emit(hdr.v); }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
