/* Header-stack elements with a run-time index (hdr.items[hdr.cmd.idx]): lowered as p4c's
 * HSIndexSimplifier does, to an if/else chain over the constant indices (an index that
 * is an expression is first saved in a temporary). */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header cmd_t {
    bit<8> idx;     // element to overwrite
    bit<8> val;     // its new value
    bit<8> pidx;    // element the parser reads
    bit<8> pval;    // what the parser read
    bit<8> next;    // items[idx + 1], read in ingress
    bit<8> zero;    // 1 if items[idx] was 0 before the write
}

header item_t {
    bit<8> v;
}

struct headers {
    ethernet_t ethernet;
    cmd_t      cmd;
    item_t[4]  items;
}

struct metadata {
    bit<8> pval;
    bit<2> n;
}

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            0x88b5: parse_cmd;
            default: accept;
        }
    }
    state parse_cmd {
        packet.extract(hdr.cmd);
        transition parse_item;
    }
    state parse_item {
        packet.extract(hdr.items.next);
        meta.n = meta.n + 1;
        transition select(meta.n) {
            0: done;
            default: parse_item;
        }
    }
    state done {
        meta.pval = hdr.items[hdr.cmd.pidx].v;
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) { apply { } }

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    action write(bit<9> port) {
        hdr.items[hdr.cmd.idx].v = hdr.cmd.val;
        standard_metadata.egress_spec = port;
    }
    table t {
        key = { hdr.ethernet.dstAddr: exact; }
        actions = { write; NoAction; }
        default_action = NoAction();
    }
    apply {
        if (hdr.cmd.isValid()) {
            hdr.cmd.pval = meta.pval;
            hdr.cmd.next = hdr.items[hdr.cmd.idx + 1].v;
            if (hdr.items[hdr.cmd.idx].v == 0) {
                hdr.cmd.zero = 1;
            }
            t.apply();
        }
    }
}

control MyEgress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) { apply { } }

control MyComputeChecksum(inout headers hdr, inout metadata meta) { apply { } }

control MyDeparser(packet_out packet, in headers hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.cmd);
        packet.emit(hdr.items);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(),
         MyDeparser()) main;
