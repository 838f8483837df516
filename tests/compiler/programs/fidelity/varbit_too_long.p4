/* A varbit extract longer than the field's maximum size: the parser stops with
 * error.HeaderTooShort (as bmv2); the ingress sees the error. */
#include <core.p4>
#include <v1model.p4>

header len_t { bit<8> len; bit<8> err; }
header opt_t { varbit<16> data; }
struct headers { len_t l; opt_t o; }
struct metadata { }

parser P(packet_in pkt, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.l);
        pkt.extract(h.o, (bit<32>)h.l.len * 8);
        transition accept;
    }
}
control VC(inout headers h, inout metadata m) { apply { } }
control I(inout headers h, inout metadata m, inout standard_metadata_t sm) {
    apply {
        if (sm.parser_error == error.HeaderTooShort) {
            h.l.err = 1;
        } else if (sm.parser_error == error.NoError) {
            h.l.err = 2;
        } else {
            h.l.err = 3;
        }
        sm.egress_spec = 1;
    }
}
control E(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control C(inout headers h, inout metadata m) { apply { } }
control D(packet_out pkt, in headers h) { apply { pkt.emit(h.l); pkt.emit(h.o); } }
V1Switch(P(), VC(), I(), E(), C(), D()) main;
