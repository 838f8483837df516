/* bool action parameters (P4_16 14.1): the control plane and const entries pass them
 * as 1-bit data (bitwidth 1 in the JSON and the P4Info); the action reads them as
 * bools with d2b, as p4c does (real bmv2 crashes on a bare runtime value where a
 * bool is expected). */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> type; }
struct headers { ethernet_t eth; }
struct metadata { bool seen; }

parser P(packet_in pkt, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.eth); transition accept; }
}
control VC(inout headers h, inout metadata m) { apply { } }
control I(inout headers h, inout metadata m, inout standard_metadata_t sm) {
    action set(bool flag, bit<8> v) {
        m.seen = flag;
        if (flag) {
            h.eth.src[7:0] = v;
        } else {
            h.eth.src[7:0] = ~v;
        }
        h.eth.src[15:8] = (bit<8>)(bit<1>)flag;
    }
    action both(bool x, bool y) {
        h.eth.src[23:16] = x && !y ? 8w1 : 8w2;
        m.seen = x == y;
    }
    table t {
        key = { h.eth.dst[7:0] : exact; }
        actions = { set; both; }
        const entries = { 0x10 : set(true, 0x10); 0x11 : set(false, 0x11); }
        default_action = set(true, 0x33);
    }
    table u {
        key = { h.eth.dst[15:8] : exact; }
        actions = { set; both; }
        default_action = both(false, false);
    }
    apply {
        sm.egress_spec = 1;
        t.apply();
        u.apply();
        if (m.seen) { h.eth.src[31:24] = 0x55; }
        if (h.eth.dst[23:16] == 0x77) { both(true, false); }
    }
}
control E(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout metadata m) { apply { } }
control D(packet_out pkt, in headers h) { apply { pkt.emit(h.eth); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
