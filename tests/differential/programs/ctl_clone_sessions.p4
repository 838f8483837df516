/* Clones through clone sessions (v1model clone(): no metadata preserved): an
 * ingress-to-egress clone, re-parsed from the frame as it came in, and an
 * egress-to-egress clone of the frame as the original's egress left it; each clone's
 * egress sees its instance_type (1: I2E, 2: E2E). */
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; bit<8> c; }
struct headers { h_t h; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control Ig(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        hdr.h.c = 0x11;  // not in the I2E clone: it is re-parsed from the frame
        if (hdr.h.a == 1) {
            clone(CloneType.I2E, 5);
        }
    }
}
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        if (sm.instance_type == 1) {
            hdr.h.b = 0xc1;
        } else if (sm.instance_type == 2) {
            hdr.h.b = hdr.h.b + 0xe0;
        } else if (hdr.h.a == 2) {
            hdr.h.b = 0x02;  // the E2E clone starts from this
            clone(CloneType.E2E, 6);
        }
    }
}
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
