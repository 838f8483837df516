/* @field_list(N) on metadata below the top level (v1model's
 * resubmit_preserving_field_list): a field annotated inside a nested struct, and a
 * struct-typed field annotated as a whole (every field under it). The resubmitted
 * packet gets the listed fields' values and zeros in the others (bmv2 resets its
 * user metadata, then copies the list). */
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> i; bit<8> j; bit<8> x; bit<8> y; bit<8> z; bit<8> w; }
struct inner_t { @field_list(1) bit<8> i; bit<8> j; }
struct deep_t { bit<8> y; }
struct pair_t { bit<8> x; deep_t deep; }
struct metadata { inner_t r; @field_list(1) pair_t p; bit<8> z; @field_list(2) bit<8> w; }
struct headers { h_t h; }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }

control Ig(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        if (sm.instance_type == 0) {
            meta.r.i = 0x11;
            meta.r.j = 0x22;
            meta.p.x = 0x33;
            meta.p.deep.y = 0x44;
            meta.z = 0x55;
            meta.w = 0x66;
            resubmit_preserving_field_list(1);
        } else {
            hdr.h.i = meta.r.i;
            hdr.h.j = meta.r.j;
            hdr.h.x = meta.p.x;
            hdr.h.y = meta.p.deep.y;
            hdr.h.z = meta.z;
            hdr.h.w = meta.w;
        }
        sm.egress_spec = 1;
    }
}
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
