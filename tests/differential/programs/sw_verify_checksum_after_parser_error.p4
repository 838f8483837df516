/* The checksum verification control runs when the parser stopped with an error too, as
 * bmv2's Parser::parse verifies the checksums after catching the parser's exception:
 * a wrong checksum in a header extracted before the error sets checksum_error beside
 * parser_error (PacketTooShort, NoMatch from `reject`). The embedded switch verified only
 * after a parse without error: checksum_error read 0 there. */
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<16> ck; bit<8> err; bit<8> perr; }
header b_t { bit<96> v; }
struct H { h_t h; b_t b; }
struct M {}
parser p(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition select(hdr.h.a) { 1: pb; 2: rej; default: accept; } }
    state pb { pk.extract(hdr.b); transition accept; }
    state rej { transition reject; }
}
control vrfy(inout H h, inout M m) {
    apply { verify_checksum(true, { h.h.a }, h.h.ck, HashAlgorithm.csum16); }
}
control ingress(inout H h, inout M m, inout standard_metadata_t sm) {
    apply {
        h.h.err = (bit<8>) sm.checksum_error;
        h.h.perr = sm.parser_error == error.NoError ? 8w0 : sm.parser_error == error.PacketTooShort ? 8w1 : sm.parser_error == error.NoMatch ? 8w2 : 8w9;
        sm.egress_spec = 1;
    }
}
control egress(inout H h, inout M m, inout standard_metadata_t sm) { apply {} }
control upd(inout H h, inout M m) { apply {} }
control dep(packet_out pk, in H h) { apply { pk.emit(h.h); pk.emit(h.b); } }
V1Switch(p(), vrfy(), ingress(), egress(), upd(), dep()) main;
