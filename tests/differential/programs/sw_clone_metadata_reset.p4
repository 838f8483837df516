/* A clone without a field list (v1model clone(I2E/E2E, session)) starts egress with
 * all of its metadata reset, as bmv2's simple_switch does (an ingress clone parses the
 * original frame again, then every metadata field is zeroed before the field list is
 * copied; an egress clone keeps the headers): user metadata the parser or ingress set,
 * standard_metadata.ingress_port and ingress_global_timestamp read 0; instance_type is
 * 1 (I2E) or 2 (E2E) and packet_length is the original frame's. The original packet
 * keeps its metadata. */
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; bit<8> c; bit<8> d; bit<8> e; bit<8> f; }
struct headers { h_t h; }
struct metadata { bit<8> set_by_parser; bit<8> set_by_ingress; }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        meta.set_by_parser = 8w0x5a;
        transition accept;
    }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }

control Ig(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        meta.set_by_ingress = 8w0x33;
        clone(CloneType.I2E, 32w5);
    }
}

control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        hdr.h.a = meta.set_by_parser;
        hdr.h.b = meta.set_by_ingress;
        hdr.h.c = (bit<8>) sm.ingress_port;
        hdr.h.d = (bit<8>) sm.instance_type;
        hdr.h.e = (bit<8>) sm.packet_length;
        hdr.h.f = sm.ingress_global_timestamp == 0 ? 8w1 : 8w0;
        if (sm.instance_type == 0) {
            clone(CloneType.E2E, 32w6);
        }
    }
}
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
