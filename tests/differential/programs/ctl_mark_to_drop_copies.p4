/* mark_to_drop on a copy of the standard metadata: a function's and a sub-control's
 * inout standard_metadata_t parameter (copy-in, copy-out; P4_16 spec 6.8). The drop
 * is made on the copy and reaches the packet with the copy-out; the original's
 * egress_spec, set before the call, must not come back. */
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; }
struct headers { h_t h; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }

void drop_if_one(in bit<8> x, inout standard_metadata_t s) {
    if (x == 1) {
        mark_to_drop(s);
    }
}
control DropIfThree(in bit<8> x, inout standard_metadata_t s) {
    apply {
        if (x == 3) {
            mark_to_drop(s);
        }
    }
}
control Ig(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    DropIfThree() d3;
    apply {
        sm.egress_spec = 2;
        drop_if_one(hdr.h.a, sm);
        d3.apply(hdr.h.a, sm);
        hdr.h.b = 0xff;
    }
}
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
