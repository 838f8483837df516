/* switch statements (P4_16 12.7): labels falling through to the next body (a: b: {..}),
 * a default that is not last (p4c warns 'label following default label'; each label
 * still selects its own body and default takes what no label names), on a table's
 * action_run and on a value. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> type; }
struct headers { ethernet_t eth; }
struct metadata { }

parser P(packet_in pkt, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.eth); transition accept; }
}
control VC(inout headers h, inout metadata m) { apply { } }
control I(inout headers h, inout metadata m, inout standard_metadata_t sm) {
    action a() { h.eth.src[7:0] = 0xa; }
    action b() { h.eth.src[7:0] = 0xb; }
    action c() { h.eth.src[7:0] = 0xc; }
    action d() { h.eth.src[7:0] = 0xd; }
    table t {
        key = { h.eth.dst[7:0] : exact; }
        actions = { a; b; c; d; }
        const entries = { 1 : a(); 2 : b(); 3 : c(); 4 : d(); }
        default_action = d();
    }
    apply {
        sm.egress_spec = 1;
        switch (t.apply().action_run) {
            a:
            b: { h.eth.src[15:8] = 0x12; }     // a and b share this block
            default: { h.eth.src[15:8] = 0xdd; }
            c: { h.eth.src[15:8] = 0x0c; }     // after default: still c's block (as p4c)
        }
        switch (h.eth.dst[15:8]) {
            1:
            2: { h.eth.src[23:16] = 0x12; }
            default: { h.eth.src[23:16] = 0xdd; }
            3: { h.eth.src[23:16] = 0x03; }
            4: { }
        }
    }
}
control E(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout metadata m) { apply { } }
control D(packet_out pkt, in headers h) { apply { pkt.emit(h.eth); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
