/* Basic tunnelling: a custom tunnel header before IPv4, forwarded by tunnel id. */
#include <core.p4>
#include <v1model.p4>
#include "common_headers.p4"

const bit<16> TYPE_MYTUNNEL = 0x1212;

header myTunnel_t {
    bit<16> proto_id;
    bit<16> dst_id;
}

struct metadata { }

struct headers {
    ethernet_t   ethernet;
    myTunnel_t   myTunnel;
    ipv4_t       ipv4;
}

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            TYPE_MYTUNNEL: parse_myTunnel;
            TYPE_IPV4: parse_ipv4;
            default: accept;
        }
    }
    state parse_myTunnel {
        packet.extract(hdr.myTunnel);
        transition select(hdr.myTunnel.proto_id) {
            TYPE_IPV4: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 {
        packet.extract(hdr.ipv4);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply {
        verify_checksum(hdr.ipv4.isValid(), IPV4_CHECKSUM_FIELDS, hdr.ipv4.hdrChecksum,
                        HashAlgorithm.csum16);
    }
}

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    action drop() {
        mark_to_drop(standard_metadata);
    }
    action ipv4_forward(bit<48> dstAddr, bit<9> port) {
        standard_metadata.egress_spec = port;
        hdr.ethernet.srcAddr = hdr.ethernet.dstAddr;
        hdr.ethernet.dstAddr = dstAddr;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
    }
    table ipv4_lpm {
        key = { hdr.ipv4.dstAddr: lpm; }
        actions = { ipv4_forward; drop; NoAction; }
        size = 1024;
        default_action = NoAction();
    }
    action myTunnel_forward(bit<9> port) {
        standard_metadata.egress_spec = port;
    }
    action myTunnel_encap(bit<16> dst_id) {
        hdr.myTunnel.setValid();
        hdr.myTunnel.proto_id = hdr.ethernet.etherType;
        hdr.myTunnel.dst_id = dst_id;
        hdr.ethernet.etherType = TYPE_MYTUNNEL;
    }
    table myTunnel_exact {
        key = { hdr.myTunnel.dst_id: exact; }
        actions = { myTunnel_forward; drop; }
        size = 1024;
        default_action = drop();
    }
    table myTunnel_ingress {
        key = { hdr.ipv4.dstAddr: lpm; }
        actions = { myTunnel_encap; NoAction; }
        default_action = NoAction();
    }
    apply {
        if (hdr.ipv4.isValid() && !hdr.myTunnel.isValid()) {
            myTunnel_ingress.apply();
            if (!hdr.myTunnel.isValid()) {
                ipv4_lpm.apply();
            }
        }
        if (hdr.myTunnel.isValid()) {
            myTunnel_exact.apply();
        }
    }
}

control MyEgress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) {
    apply { }
}

control MyComputeChecksum(inout headers hdr, inout metadata meta) {
    apply {
        update_checksum(hdr.ipv4.isValid(), IPV4_CHECKSUM_FIELDS, hdr.ipv4.hdrChecksum,
                        HashAlgorithm.csum16);
    }
}

control MyDeparser(packet_out packet, in headers hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.myTunnel);
        packet.emit(hdr.ipv4);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(),
         MyDeparser()) main;
