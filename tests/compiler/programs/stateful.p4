/* Registers and counters: a per-port packet count kept in a register is written
 * into the packet; an if inside an action marks every packet after the first. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header seen_t {
    bit<32> count;
    bit<8>  repeat;
}

struct headers { ethernet_t ethernet; seen_t seen; }
struct metadata { bit<32> count; }

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        packet.extract(hdr.seen);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) { apply { } }

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    register<bit<32>>(512) packets_per_port;
    counter(512, CounterType.packets_and_bytes) rx;

    action tally() {
        packets_per_port.read(meta.count, (bit<32>)standard_metadata.ingress_port);
        meta.count = meta.count + 1;
        packets_per_port.write((bit<32>)standard_metadata.ingress_port, meta.count);
        rx.count((bit<32>)standard_metadata.ingress_port);
        hdr.seen.count = meta.count;
        if (meta.count > 1) {
            hdr.seen.repeat = 1;
        } else {
            hdr.seen.repeat = 0;
        }
    }
    apply {
        tally();
        standard_metadata.egress_spec = 2;
    }
}

control MyEgress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) { apply { } }

control MyComputeChecksum(inout headers hdr, inout metadata meta) { apply { } }

control MyDeparser(packet_out packet, in headers hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.seen);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(),
         MyDeparser()) main;
