// a varbit extract longer than the field's maximum: the parser stops with HeaderTooShort, ingress still runs
#include <core.p4>
#include <v1model.p4>
header len_t { bit<8> n; }
header opt_t { varbit<16> v; }
header tail_t { bit<8> t; }
struct headers { len_t l; opt_t o; tail_t t; }
struct meta_t { }
parser P(packet_in pkt, out headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.l);
        pkt.extract(hdr.o, (bit<32>)hdr.l.n * 8);
        pkt.extract(hdr.t);
        transition accept;
    }
}
control V(inout headers hdr, inout meta_t m) { apply { } }
control I(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (sm.parser_error == error.HeaderTooShort) { hdr.l.n = 0xe1; }
        else if (sm.parser_error == error.ParserInvalidArgument) { hdr.l.n = 0xe2; }
        else if (sm.parser_error == error.PacketTooShort) { hdr.l.n = 0xe3; }
        else if (sm.parser_error != error.NoError) { hdr.l.n = 0xe4; }
    }
}
control E(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.l); pkt.emit(hdr.o); pkt.emit(hdr.t); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
