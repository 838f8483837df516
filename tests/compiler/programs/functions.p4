/* Functions with locals, if/else and several returns, inlined at their call sites
 * (copy-in/copy-out for in/out/inout parameters), called from actions, apply blocks
 * and a parser state. */
#include <core.p4>
#include <v1model.p4>
#include "common_headers.p4"

struct metadata {
    bit<8> hops;
}

struct headers {
    ethernet_t ethernet;
    ipv4_t     ipv4;
}

/* TTL after one hop: expired packets get 0, expedited (DSCP 46) traffic keeps its TTL. */
bit<8> next_ttl(in bit<8> ttl, in bit<6> dscp) {
    if (ttl <= 1) {
        return 0;
    }
    if (dscp == 46) {
        return ttl;
    }
    bit<8> t = ttl - 1;
    return t;
}

void swap_macs(inout ethernet_t e) {
    bit<48> tmp = e.dstAddr;
    e.dstAddr = e.srcAddr;
    e.srcAddr = tmp;
}

/* ECN codepoint by transport protocol; false for anything else. */
bool classify(in bit<8> proto, out bit<2> ecn) {
    ecn = 0;
    if (proto == PROTO_TCP) {
        ecn = 1;
        return true;
    } else if (proto == PROTO_UDP) {
        ecn = 2;
        return true;
    }
    return false;
}

bit<8> hops_left(in bit<8> ttl) {
    bit<8> h = 0;
    if (ttl > 64) {
        h = ttl - 64;
    } else {
        return ttl;
    }
    return h;
}

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            TYPE_IPV4: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 {
        packet.extract(hdr.ipv4);
        meta.hops = hops_left(hdr.ipv4.ttl);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) { apply { } }

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    action drop() {
        mark_to_drop(standard_metadata);
    }
    action forward(bit<9> port) {
        standard_metadata.egress_spec = port;
        hdr.ipv4.ttl = next_ttl(hdr.ipv4.ttl, hdr.ipv4.diffserv);
    }
    action reflect() {
        swap_macs(hdr.ethernet);
        standard_metadata.egress_spec = standard_metadata.ingress_port;
    }
    table ipv4_lpm {
        key = { hdr.ipv4.dstAddr: lpm; }
        actions = { forward; reflect; drop; }
        default_action = drop();
    }
    apply {
        if (hdr.ipv4.isValid()) {
            ipv4_lpm.apply();
            bit<2> e;
            if (classify(hdr.ipv4.protocol, e)) {
                hdr.ipv4.ecn = e;
            }
            hdr.ipv4.identification = (bit<16>)meta.hops;
            if (hdr.ipv4.ttl == 0) {
                drop();
            }
        }
    }
}

control MyEgress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) { apply { } }

control MyComputeChecksum(inout headers hdr, inout metadata meta) { apply { } }

control MyDeparser(packet_out packet, in headers hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.ipv4);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(),
         MyDeparser()) main;
