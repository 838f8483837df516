// `error` values as table keys and select labels (P4_16 7.1.3, 13.x): const entries
// and select cases on error members match the codes the JSON's "errors" give them; a
// packet too short for the second header reaches ingress with PacketTooShort.
#include <core.p4>
#include <v1model.p4>
error { Mine }
header a_t { bit<8> tag; bit<8> res; }
header b_t { bit<128> pad; }  // longer than a padded minimum frame
struct headers { a_t a; b_t b; }
struct meta_t { error seen; }
parser P(packet_in pkt, out headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.a);
        m.seen = error.NoError;
        transition select(hdr.a.tag) { 0xee: mine; default: more; }
    }
    state mine { m.seen = error.Mine; transition check; }
    state check { transition select(m.seen) { error.Mine: accept; default: reject; } }
    state more { pkt.extract(hdr.b); transition accept; }
}
control V(inout headers hdr, inout meta_t m) { apply { } }
control I(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    action set(bit<8> v) { hdr.a.res = v; }
    table by_parser_error {
        key = { sm.parser_error : exact; }
        actions = { set; }
        const entries = { error.NoError : set(1); error.PacketTooShort : set(2); }
        default_action = set(0xff);
    }
    table by_mine {
        key = { m.seen : exact; }
        actions = { set; NoAction; }
        const entries = { error.Mine : set(3); }
        default_action = NoAction();
    }
    apply {
        by_parser_error.apply();
        by_mine.apply();
        sm.egress_spec = 1;
    }
}
control E(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.a); pkt.emit(hdr.b); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
