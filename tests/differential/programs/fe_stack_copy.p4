// Whole header stacks assigned, in a parser state and in a control: every element
// (contents and validity) is copied; the copy is independent of the original.
#include <core.p4>
#include <v1model.p4>
header tag_t { bit<8> v; }
struct headers { tag_t[3] a; tag_t[3] b; }
struct meta_t { }
parser P(packet_in pkt, out headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.a.next);
        pkt.extract(hdr.a.next);
        hdr.b = hdr.a;
        transition accept;
    }
}
control V(inout headers hdr, inout meta_t m) { apply { } }
control I(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        hdr.b[1].v = hdr.b[1].v + 1;
        if (hdr.a[0].v == 0xff) {
            hdr.a = hdr.b;
        }
    }
}
control E(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.a); pkt.emit(hdr.b); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
