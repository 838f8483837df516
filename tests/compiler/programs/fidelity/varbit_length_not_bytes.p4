/* A varbit extract whose length in bits is not a whole number of bytes: bmv2 stops
 * the parser with error.ParserInvalidArgument, checked before the header's maximum
 * (HeaderTooShort) and the packet's end (PacketTooShort). */
#include <core.p4>
#include <v1model.p4>

header len_t { bit<8> bits; bit<8> err; }
header opt_t { varbit<16> data; }
struct headers { len_t l; opt_t o; }
struct metadata { }

parser P(packet_in pkt, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.l);
        pkt.extract(h.o, (bit<32>)h.l.bits);
        transition accept;
    }
}
control VC(inout headers h, inout metadata m) { apply { } }
control I(inout headers h, inout metadata m, inout standard_metadata_t sm) {
    apply {
        if (sm.parser_error == error.NoError) {
            h.l.err = 0;
        } else if (sm.parser_error == error.PacketTooShort) {
            h.l.err = 1;
        } else if (sm.parser_error == error.HeaderTooShort) {
            h.l.err = 4;
        } else if (sm.parser_error == error.ParserInvalidArgument) {
            h.l.err = 6;
        } else {
            h.l.err = 7;
        }
        sm.egress_spec = 1;
    }
}
control E(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control C(inout headers h, inout metadata m) { apply { } }
control D(packet_out pkt, in headers h) { apply { pkt.emit(h.l); pkt.emit(h.o); } }
V1Switch(P(), VC(), I(), E(), C(), D()) main;
