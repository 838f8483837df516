/* An ACL with ternary and range keys, const entries with priorities, a switch
 * on the action run and a hit/miss branch. */
#include <core.p4>
#include <v1model.p4>
#include "common_headers.p4"

struct metadata { }

struct headers {
    ethernet_t ethernet;
    ipv4_t     ipv4;
    tcp_t      tcp;
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
        transition select(hdr.ipv4.protocol) {
            PROTO_TCP: parse_tcp;
            default: accept;
        }
    }
    state parse_tcp {
        packet.extract(hdr.tcp);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) { apply { } }

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    action allow() { }
    action deny() { mark_to_drop(standard_metadata); }
    action to_port(bit<9> port) { standard_metadata.egress_spec = port; }

    table acl {
        key = {
            hdr.ipv4.srcAddr: ternary;
            hdr.tcp.dstPort:  range;
        }
        actions = { allow; deny; }
        default_action = allow();
        const entries = {
            (0x0a000000 &&& 0xff000000, 22 .. 22): deny();   // no ssh from 10/8
            (_, 0 .. 1023): allow();
            (_, _): deny();
        }
    }

    table fwd {
        key = { hdr.ipv4.dstAddr: exact; }
        actions = { to_port; NoAction; }
        default_action = NoAction();
    }

    apply {
        if (hdr.tcp.isValid()) {
            switch (acl.apply().action_run) {
                allow: {
                    if (!fwd.apply().hit) {
                        standard_metadata.egress_spec = 3;
                    }
                }
                deny: { }
            }
        } else {
            standard_metadata.egress_spec = 4;
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
        packet.emit(hdr.tcp);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(),
         MyDeparser()) main;
