/* MPLS-style label stack: swap, pop and push on a header stack parsed in a loop. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header label_t {
    bit<20> label;
    bit<3>  tc;
    bit<1>  bos;
    bit<8>  ttl;
}

struct headers {
    ethernet_t ethernet;
    label_t[3] labels;
}

struct metadata { }

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            0x8847: parse_labels;
            default: accept;
        }
    }
    state parse_labels {
        packet.extract(hdr.labels.next);
        transition select(hdr.labels.last.bos) {
            0: parse_labels;
            1: accept;
        }
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) { apply { } }

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    action swap(bit<20> new_label, bit<9> port) {
        hdr.labels[0].label = new_label;
        standard_metadata.egress_spec = port;
    }
    action pop(bit<9> port) {
        hdr.labels.pop_front(1);
        standard_metadata.egress_spec = port;
    }
    action push(bit<20> label, bit<9> port) {
        hdr.labels.push_front(1);
        hdr.labels[0].setValid();
        hdr.labels[0] = { label, 0, 0, 64 };
        standard_metadata.egress_spec = port;
    }
    table mpls {
        key = { hdr.labels[0].label: exact; }
        actions = { swap; pop; push; NoAction; }
        default_action = NoAction();
    }
    apply {
        if (hdr.labels[0].isValid()) {
            mpls.apply();
        }
    }
}

control MyEgress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) { apply { } }

control MyComputeChecksum(inout headers hdr, inout metadata meta) { apply { } }

control MyDeparser(packet_out packet, in headers hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.labels);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(),
         MyDeparser()) main;
