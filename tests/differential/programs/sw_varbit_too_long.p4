/* extract(hdr, len) of a varbit longer than its declared maximum fails with
 * error.HeaderTooShort (P4_16 spec, core library); on v1model the parser stops and
 * ingress sees standard_metadata.parser_error (bmv2 simple_switch). */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> type; }
header opt_t { bit<8> len; }
header var_t { varbit<32> data; }
struct headers { ethernet_t eth; opt_t opt; var_t v; }
struct metadata { }

parser P(packet_in pkt, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.eth);
        pkt.extract(h.opt);
        pkt.extract(h.v, (bit<32>)h.opt.len * 8);
        transition accept;
    }
}
control VC(inout headers h, inout metadata m) { apply { } }
control I(inout headers h, inout metadata m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (sm.parser_error == error.HeaderTooShort) {
            h.eth.src[7:0] = 0xee;
        } else if (sm.parser_error == error.NoError) {
            h.eth.src[7:0] = 0x00;
        } else {
            h.eth.src[7:0] = 0x77;
        }
    }
}
control E(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout metadata m) { apply { } }
control D(packet_out pkt, in headers h) {
    apply { pkt.emit(h.eth); pkt.emit(h.opt); pkt.emit(h.v); }
}
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
