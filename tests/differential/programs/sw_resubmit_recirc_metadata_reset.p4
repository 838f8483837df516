/* A resubmitted or recirculated packet starts ingress with its metadata reset but for
 * the field list its call preserves (v1model resubmit_preserving_field_list /
 * recirculate_preserving_field_list with @field_list, as bmv2's simple_switch runs
 * them): standard_metadata.ingress_port reads 0 on the new pass, a field outside the
 * list reads 0, a field in it keeps its value; instance_type is 6 (resubmit) or 4
 * (recirculation). */
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; bit<8> c; bit<8> d; bit<8> g; }
struct headers { h_t h; }
struct metadata {
    @field_list(1) bit<8> kept;
    bit<8> lost;
}

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }

control Ig(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        // a port per case (g + 1): on simple_switch a recirculated packet may come out
        // after the packet sent next
        sm.egress_spec = (bit<9>) hdr.h.g + 1;
        hdr.h.a = meta.kept;
        hdr.h.b = meta.lost;
        hdr.h.c = (bit<8>) sm.ingress_port;
        hdr.h.d = (bit<8>) sm.instance_type;
        if (sm.instance_type == 0 && hdr.h.g == 1) {
            meta.kept = 8w0x42;
            meta.lost = 8w0x24;
            resubmit_preserving_field_list(1);
        }
    }
}

control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        if (sm.instance_type == 0 && hdr.h.g == 2) {
            meta.kept = 8w0x43;
            meta.lost = 8w0x25;
            recirculate_preserving_field_list(1);
            hdr.h.g = 3;
        }
    }
}
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
