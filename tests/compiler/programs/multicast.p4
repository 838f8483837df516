/* L2 switching with flooding through a multicast group; egress prunes the
 * copy that would go back out of the ingress port. */
#include <core.p4>
#include <v1model.p4>
#include "common_headers.p4"

struct metadata {
    bit<9> ingress_port;
}

struct headers {
    ethernet_t ethernet;
}

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    action drop() {
        mark_to_drop(standard_metadata);
    }
    action multicast() {
        standard_metadata.mcast_grp = 1;
        meta.ingress_port = standard_metadata.ingress_port;
    }
    action mac_forward(bit<9> port) {
        standard_metadata.egress_spec = port;
    }
    table mac_lookup {
        key = { hdr.ethernet.dstAddr: exact; }
        actions = { multicast; mac_forward; drop; }
        size = 1024;
        default_action = multicast();
    }
    apply {
        if (hdr.ethernet.isValid()) {
            mac_lookup.apply();
        }
    }
}

control MyEgress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) {
    action drop() {
        mark_to_drop(standard_metadata);
    }
    apply {
        if (standard_metadata.egress_port == standard_metadata.ingress_port) {
            drop();
        }
    }
}

control MyComputeChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control MyDeparser(packet_out packet, in headers hdr) {
    apply {
        packet.emit(hdr.ethernet);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(),
         MyDeparser()) main;
