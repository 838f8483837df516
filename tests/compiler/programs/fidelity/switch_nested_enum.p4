/* switch on an enum (labels Color.Red ...), a switch on action_run nested in one of
 * its bodies with labels naming actions (one renamed by @name, NoAction for a miss),
 * exit inside a case, and a switch on a serializable enum with default. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> type; }
struct headers { ethernet_t eth; }
enum Color { Red, Green, Blue }
enum bit<8> Kind { K1 = 1, K2 = 2 }
struct metadata { }

parser P(packet_in pkt, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.eth); transition accept; }
}
control VC(inout headers h, inout metadata m) { apply { } }
control I(inout headers h, inout metadata m, inout standard_metadata_t sm) {
    @name("renamed_a") action a() { h.eth.src[7:0] = 0xa; }
    action b() { h.eth.src[7:0] = 0xb; }
    table t {
        key = { h.eth.dst[7:0] : exact; }
        actions = { a; b; }
        const entries = { 1 : a(); 2 : b(); }
    }
    apply {
        sm.egress_spec = 1;
        Color c = Color.Red;
        if (h.eth.dst[15:8] == 1) { c = Color.Green; } else if (h.eth.dst[15:8] == 2) { c = Color.Blue; }
        switch (c) {
            Color.Red: { h.eth.src[15:8] = 0x11; }
            Color.Green:
            Color.Blue: {
                switch (t.apply().action_run) {
                    a: { h.eth.src[15:8] = 0xaa; }
                    NoAction: { h.eth.src[15:8] = 0xee; exit; }
                }
            }
        }
        Kind k = (Kind)h.eth.dst[23:16];
        switch (k) {
            Kind.K1: { h.eth.src[23:16] = 1; }
            default: { h.eth.src[23:16] = 0xff; }
        }
        h.eth.src[31:24] = 0x77;
    }
}
control E(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout metadata m) { apply { } }
control D(packet_out pkt, in headers h) { apply { pkt.emit(h.eth); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
