/* A stack of headers with a varbit field: extract_VL into .next with a length from a
 * lookahead, a whole element (its varbit included) assigned to another, HeaderTooShort
 * when a length exceeds the field's maximum. */
#include <core.p4>
#include <v1model.p4>
header len_t { bit<8> n; }
header opt_t { bit<8> len; varbit<16> data; }
struct headers { len_t l; opt_t[2] o; }
struct metadata { }
parser P(packet_in pkt, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.l);
        transition select(h.l.n) { 0: accept; default: one; }
    }
    state one {
        pkt.extract(h.o.next, (bit<32>)pkt.lookahead<bit<8>>() * 8);
        h.l.n = h.l.n - 1;
        transition select(h.l.n) { 0: accept; default: one; }
    }
}
control VC(inout headers h, inout metadata m) { apply { } }
control I(inout headers h, inout metadata m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (h.o[1].isValid()) { h.o[0] = h.o[1]; h.o[1].setInvalid(); }
    }
}
control E(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control C(inout headers h, inout metadata m) { apply { } }
control D(packet_out pkt, in headers h) { apply { pkt.emit(h); } }
V1Switch(P(), VC(), I(), E(), C(), D()) main;
