/* One object of each kind P4Runtime writes or reads, for the differential comparison of
 * the embedded switch's P4Runtime server with simple_switch_grpc's
 * (tests/switch/p4rt_differential.py). It forwards nothing of interest. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

struct metadata { bit<32> dst; bit<8> cls; }
struct headers { ethernet_t ethernet; }

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start { packet.extract(hdr.ethernet); transition accept; }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) { apply { } }

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    counter(8, CounterType.packets_and_bytes) port_counter;
    counter(2, CounterType.packets) b_counter;
    counter(2, CounterType.bytes) z_counter;
    meter(2, MeterType.packets) z_meter;
    meter(4, MeterType.bytes) port_meter;
    register<bit<32>>(8) reg;
    direct_counter(CounterType.packets_and_bytes) exact_hits;
    direct_meter<bit<8>>(MeterType.packets) acl_meter;

    action forward(bit<9> port) { standard_metadata.egress_spec = port; }
    action forward_counted(bit<9> port) {
        standard_metadata.egress_spec = port;
        exact_hits.count();
    }
    action drop() { mark_to_drop(standard_metadata); }
    action metered(bit<9> port) {
        standard_metadata.egress_spec = port;
        acl_meter.read(meta.cls);
    }
    action set_cls(bit<8> cls) { meta.cls = cls; }

    table exact_t {
        key = { hdr.ethernet.etherType: exact; }
        actions = { forward_counted; drop; @defaultonly NoAction; }
        counters = exact_hits;
        default_action = NoAction();
        size = 64;
    }
    table ternary_t {
        key = { hdr.ethernet.srcAddr: ternary; }
        actions = { metered; @tableonly drop; @defaultonly NoAction; }
        meters = acl_meter;
        default_action = NoAction();
        size = 64;
    }
    table lpm_t {
        key = { meta.dst: lpm; }
        actions = { forward; drop; }
        default_action = drop();
        size = 64;
    }
    table range_t {
        key = { hdr.ethernet.etherType: range; hdr.ethernet.dstAddr: optional; }
        actions = { set_cls; NoAction; }
        default_action = NoAction();
        size = 64;
    }
    table ecmp_t {
        key = { hdr.ethernet.dstAddr: exact; }
        actions = { forward; @defaultonly NoAction; }
        implementation = action_selector(HashAlgorithm.crc16, 16, 32w10);
        default_action = NoAction();
        size = 16;
    }
    table profile_t {
        key = { hdr.ethernet.srcAddr: exact; }
        actions = { forward; drop; }
        implementation = action_profile(8);
        size = 16;
    }
    table const_default_t {
        key = { meta.cls: exact; }
        actions = { set_cls; NoAction; }
        const default_action = NoAction();
        size = 16;
    }

    apply {
        meta.dst = (bit<32>)hdr.ethernet.dstAddr;
        exact_t.apply();
        ternary_t.apply();
        lpm_t.apply();
        range_t.apply();
        ecmp_t.apply();
        profile_t.apply();
        const_default_t.apply();
        port_counter.count((bit<32>)standard_metadata.ingress_port);
        port_meter.execute_meter((bit<32>)standard_metadata.ingress_port, meta.cls);
        reg.write(0, (bit<32>)meta.cls);
        b_counter.count(0);
        z_counter.count(1);
        z_meter.execute_meter(0, meta.cls);
    }
}

control MyEgress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) { apply { } }

control MyComputeChecksum(inout headers hdr, inout metadata meta) { apply { } }

control MyDeparser(packet_out packet, in headers hdr) {
    apply { packet.emit(hdr.ethernet); }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(),
         MyDeparser()) main;
