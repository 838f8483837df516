/* Sub-controls with constructor parameters (`TtlDec(2) dec2;`) and apply arguments
 * other than the enclosing control's parameters: header fields and locals passed
 * directly, expressions through temporaries (copy-in/copy-out). */
#include <core.p4>
#include <v1model.p4>
#include "common_headers.p4"

struct metadata {
    bit<8> cls;
}

struct headers {
    ethernet_t ethernet;
    ipv4_t     ipv4;
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
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) { apply { } }

/* Decrements the TTL of the header it is given by `amount` (saturating at 0). */
control TtlDec(inout ipv4_t ip)(bit<8> amount) {
    apply {
        ip.ttl = ip.ttl |-| amount;
    }
}

/* Classifies a protocol number: base + the table's value, or just base for protocol 0. */
control Classify(in bit<8> proto, out bit<8> cls)(bit<8> base) {
    action set(bit<8> c) {
        cls = base + c;
    }
    table classes {
        key = { proto: exact; }
        actions = { set; NoAction; }
        default_action = NoAction();
    }
    apply {
        cls = base;
        if (proto == 0) {
            return;
        }
        classes.apply();
    }
}

control Swap(inout bit<48> a, inout bit<48> b) {
    apply {
        bit<48> t = a;
        a = b;
        b = t;
    }
}

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    TtlDec(1) dec1;
    TtlDec(5) dec5;
    Classify(8w0x10) low;
    Classify(8w0x80) high;
    Swap() swap;
    apply {
        if (!hdr.ipv4.isValid()) {
            return;
        }
        standard_metadata.egress_spec = 2;
        if (hdr.ipv4.diffserv == 0) {
            dec1.apply(hdr.ipv4);
        } else {
            dec5.apply(hdr.ipv4);
        }
        bit<8> c;
        if (hdr.ipv4.srcAddr[31:24] == 10) {
            low.apply(hdr.ipv4.protocol, c);
        } else {
            high.apply(hdr.ipv4.protocol & 0x7f, c);
        }
        hdr.ipv4.identification = 8w0 ++ c;
        if (hdr.ipv4.ecn == 3) {
            swap.apply(hdr.ethernet.srcAddr, hdr.ethernet.dstAddr);
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
