// A checksum over a header with a varbit field (IPv4 options): the field counts with
// its current width, not its declared maximum. The TTL is decremented and the header
// checksum recomputed; the checksum of a frame that arrived wrong is left as it came.
#include <core.p4>
#include <v1model.p4>
header eth_t { bit<48> dst; bit<48> src; bit<16> type; }
header ip_t {
    bit<4> version; bit<4> ihl; bit<8> tos; bit<16> len; bit<16> id; bit<3> flags;
    bit<13> frag; bit<8> ttl; bit<8> proto; bit<16> csum; bit<32> src; bit<32> dst;
    varbit<320> options;
}
struct headers { eth_t eth; ip_t ip; }
struct meta_t { bit<1> bad; }
parser P(packet_in pkt, out headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        transition select(hdr.eth.type) { 0x0800: ip; default: accept; }
    }
    state ip {
        bit<4> ihl = pkt.lookahead<bit<8>>()[3:0];
        pkt.extract(hdr.ip, ((bit<32>)ihl - 5) * 32);
        transition accept;
    }
}
control V(inout headers hdr, inout meta_t m) {
    apply {
        verify_checksum(hdr.ip.isValid(),
            { hdr.ip.version, hdr.ip.ihl, hdr.ip.tos, hdr.ip.len, hdr.ip.id, hdr.ip.flags,
              hdr.ip.frag, hdr.ip.ttl, hdr.ip.proto, hdr.ip.src, hdr.ip.dst, hdr.ip.options },
            hdr.ip.csum, HashAlgorithm.csum16);
    }
}
control I(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (sm.checksum_error == 1) { hdr.eth.src = 0xbad; }
        else if (hdr.ip.isValid()) { hdr.ip.ttl = hdr.ip.ttl - 1; }
    }
}
control E(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout meta_t m) {
    apply {
        update_checksum(hdr.ip.isValid() && hdr.eth.src != 0xbad,
            { hdr.ip.version, hdr.ip.ihl, hdr.ip.tos, hdr.ip.len, hdr.ip.id, hdr.ip.flags,
              hdr.ip.frag, hdr.ip.ttl, hdr.ip.proto, hdr.ip.src, hdr.ip.dst, hdr.ip.options },
            hdr.ip.csum, HashAlgorithm.csum16);
    }
}
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.eth); pkt.emit(hdr.ip); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
