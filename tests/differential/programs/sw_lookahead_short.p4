/* Lookahead past the end of the packet, as bmv2 does it: a parser `set` from
 * lookahead (also for a lookahead whose value is dropped, `pkt.lookahead<T>();`) fails
 * with PacketTooShort; a select key's lookahead reads what is there (no error).
 * Ingress sends packets parsed without error to port 1, the others to port 2. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> type; }
struct eight_t { bit<64> bits; }
struct headers { ethernet_t eth; }
struct metadata { bit<64> v; }

parser P(packet_in pkt, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.eth);
        transition select(h.eth.type) {
            0x0001: by_select;
            0x0002: by_set;
            default: dropped_value;
        }
    }
    state by_select {
        transition select(pkt.lookahead<bit<64>>()) { 0: accept; default: accept; }
    }
    state by_set { m.v = pkt.lookahead<bit<64>>(); transition accept; }
    state dropped_value { pkt.lookahead<eight_t>(); transition accept; }
}
control VC(inout headers h, inout metadata m) { apply { } }
control I(inout headers h, inout metadata m, inout standard_metadata_t sm) {
    apply { sm.egress_spec = sm.parser_error == error.NoError ? 9w1 : 9w2; }
}
control E(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout metadata m) { apply { } }
control D(packet_out pkt, in headers h) { apply { pkt.emit(h.eth); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
