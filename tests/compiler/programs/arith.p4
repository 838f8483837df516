/* Expression semantics: wrap-around, saturating, signed, shifts, slices,
 * concatenation, complement, ?: and comparisons, each written into a header. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header ops_t {
    bit<8>  a;
    bit<8>  b;
    int<8>  s;
    bit<8>  r_add;
    bit<8>  r_sub;
    bit<8>  r_satadd;
    bit<8>  r_satsub;
    bit<16> r_concat;
    bit<8>  r_shl;
    bit<8>  r_shr;
    bit<8>  r_slice;
    bit<8>  r_not;
    bit<8>  r_mux;
    int<8>  r_sneg;
    int<8>  r_ssat;
    bit<8>  r_cmp;
    bit<8>  r_scmp;
}

struct headers { ethernet_t ethernet; ops_t ops; }
struct metadata { }

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            0x1234: parse_ops;
            default: accept;
        }
    }
    state parse_ops {
        packet.extract(hdr.ops);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) { apply { } }

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    action compute() {
        bit<8> a = hdr.ops.a;
        bit<8> b = hdr.ops.b;
        hdr.ops.r_add = a + b;
        hdr.ops.r_sub = a - b;
        hdr.ops.r_satadd = a |+| b;
        hdr.ops.r_satsub = b |-| a;
        hdr.ops.r_concat = a ++ b;
        hdr.ops.r_shl = a << 3;
        hdr.ops.r_shr = a >> 2;
        hdr.ops.r_slice = a[6:3] ++ b[5:2];
        hdr.ops.r_not = ~a;
        hdr.ops.r_mux = a > b ? a : b;
        hdr.ops.r_sneg = -hdr.ops.s;
        hdr.ops.r_ssat = hdr.ops.s |+| -100;
        hdr.ops.r_cmp = a < b ? 8w1 : 8w0;
        hdr.ops.r_scmp = hdr.ops.s < 0 ? 8w1 : 8w0;
        standard_metadata.egress_spec = 1;
    }
    apply {
        if (hdr.ops.isValid()) {
            compute();
        } else {
            mark_to_drop(standard_metadata);
        }
    }
}

control MyEgress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) { apply { } }

control MyComputeChecksum(inout headers hdr, inout metadata meta) { apply { } }

control MyDeparser(packet_out packet, in headers hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.ops);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(),
         MyDeparser()) main;
