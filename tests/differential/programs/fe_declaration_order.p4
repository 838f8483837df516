// Names mean what their declaration up to that point says (P4_16 7.2.x; p4c's lexer
// tracks type names as it goes): v1model.p4 declares the extern function
// verify_checksum and hash<O, T, D, M> before this program's control verify_checksum
// and struct M; an older-version program declares its own PortId_t (v1model's comes
// only with V1MODEL_VERSION 20200408); words that are keywords only in places (`type`,
// `key`, `priority`) name parameters and variables elsewhere.
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; bit<16> c; bit<8> d; }
struct headers { h_t h; }
struct PortId_t { bit<9> v; }
struct M { PortId_t in_port; bit<8> type; }
const PortId_t SEVEN = { 9w7 };
parser P(packet_in pkt, out headers hdr, inout M m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control verify_checksum(inout headers hdr, inout M m) { apply { } }
control I(inout headers hdr, inout M m, inout standard_metadata_t sm) {
    action classify(bit<8> type, bit<8> priority) {
        bit<8> key = type + priority;
        hdr.h.b = key;
        m.type = type;
    }
    table t {
        key = { hdr.h.a : exact; }
        actions = { classify; NoAction; }
        const entries = { 1 : classify(0x10, 0x01); 2 : classify(0x20, 0x02); }
        default_action = NoAction();
    }
    apply {
        m.in_port.v = sm.ingress_port;
        t.apply();
        hdr.h.d = m.type;
        if (m.in_port == SEVEN) { hdr.h.d = hdr.h.d | 0x80; }
        hash(hdr.h.c, HashAlgorithm.identity, 16w0, { hdr.h.a }, 32w65536);
        sm.egress_spec = 1;
    }
}
control E(inout headers hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout M m) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), verify_checksum(), I(), E(), C(), D()) main;
