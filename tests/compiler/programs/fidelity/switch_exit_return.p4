/* switch on action_run with only a default label, with return in a case (the rest of
 * ingress is skipped, egress still runs) and exit in a case (the rest of ingress
 * skipped), on tables with a @defaultonly default action. */
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
    @defaultonly action miss() { h.eth.src[7:0] = 0xff; }
    table t { key = { h.eth.dst[7:0] : exact; } actions = { a; miss; } const entries = { 1 : a(); } default_action = miss(); }
    table v { key = { h.eth.dst[7:0] : exact; } actions = { a; miss; } const entries = { 1 : a(); } default_action = miss(); }
    table u { key = { h.eth.dst[15:8] : exact; } actions = { a; } }
    apply {
        sm.egress_spec = 1;
        switch (t.apply().action_run) {
            default: { h.eth.src[15:8] = 0xdd; }
        }
        switch (u.apply().action_run) {
            a: { return; }
        }
        switch (v.apply().action_run) {
            miss: { h.eth.src[23:16] = 0x33; exit; }
            a: { }
        }
        h.eth.src[31:24] = 0x44;
    }
}
control E(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { h.eth.src[39:32] = 0x55; } }
control CC(inout headers h, inout metadata m) { apply { } }
control D(packet_out pkt, in headers h) { apply { pkt.emit(h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
