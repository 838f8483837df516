// A varbit field of the user metadata (P4_16 7.1.6): laid out, as p4c does, as a header
// instance of its own; it takes a varbit's value and length from a header field and
// gives them back (assign_VL moves the width too).
#include <core.p4>
#include <v1model.p4>
header len_t { bit<8> n; }
header opt_t { varbit<32> data; }
struct headers { len_t len; opt_t opt; opt_t copy; }
struct meta_t { varbit<32> saved; bit<8> tag; }
parser P(packet_in pkt, out headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.len);
        pkt.extract(hdr.opt, (bit<32>) hdr.len.n * 8);
        m.saved = hdr.opt.data;
        transition accept;
    }
}
control V(inout headers hdr, inout meta_t m) { apply { } }
control I(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        hdr.copy.setValid();
        hdr.copy.data = m.saved;
        sm.egress_spec = 1;
    }
}
control E(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers hdr) {
    apply { pkt.emit(hdr.len); pkt.emit(hdr.opt); pkt.emit(hdr.copy); }
}
V1Switch(P(), V(), I(), E(), C(), D()) main;
