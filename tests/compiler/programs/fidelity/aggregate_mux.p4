/* ?: on structs and headers (P4_16 8.5.1): bmv2's ?: yields data only, so an
 * aggregate assigned from a ?: becomes an if/else of assignments (SplitAggregateMux);
 * only the chosen operand is evaluated; nested ?:, in an action and a declaration. */
#include <core.p4>
#include <v1model.p4>
header ethernet_t { bit<48> dst; bit<48> src; bit<16> type; }
header h_t { bit<8> a; bit<8> b; }
struct pair_t { bit<8> a; bit<8> b; }
struct headers { ethernet_t eth; h_t p; h_t q; h_t res; }
struct metadata { pair_t x; }
parser P(packet_in pkt, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.eth);
        transition select(h.eth.type) { 1: both; default: accept; }
    }
    state both { pkt.extract(h.p); pkt.extract(h.q); transition accept; }
}
control VC(inout headers h, inout metadata m) { apply { } }
control I(inout headers h, inout metadata m, inout standard_metadata_t sm) {
    action pick(bit<8> sel) {
        h.res = sel == 0 ? h.p : (sel == 1 ? h.q : h.res);
    }
    table t { key = { h.eth.dst[7:0] : exact; } actions = { pick; }
              const entries = { 0 : pick(0); 1 : pick(1); 2 : pick(2); } }
    apply {
        sm.egress_spec = 1;
        pair_t one = { 1, 2 };
        pair_t two = { 3, 4 };
        pair_t r = h.eth.dst[8:8] == 1 ? one : two;
        m.x = h.eth.dst[9:9] == 1 ? r : { 9, 9 };
        h.eth.src[15:0] = m.x.a ++ m.x.b;
        t.apply();
    }
}
control E(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout metadata m) { apply { } }
control D(packet_out pkt, in headers h) { apply { pkt.emit(h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
