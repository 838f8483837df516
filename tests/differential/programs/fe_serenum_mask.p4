// Select keysets: serializable-enum values with &&& masks (implicitly converted to the
// underlying type, P4_16 8.11.2) and _ (don't care) inside tuple keysets.
#include <core.p4>
#include <v1model.p4>
enum bit<8> Kind { A = 1, B = 2, C = 0x13 }
header h_t { bit<8> a; bit<8> b; bit<8> c; }
struct headers { h_t h; }
struct meta_t { }
control V(inout headers hdr, inout meta_t m) { apply { } }
parser P(packet_in pkt, out headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition select(hdr.h.a, hdr.h.b) {
            (_, Kind.B): two;
            (Kind.C &&& 0x0f, _): low_three;
            default: accept;
        }
    }
    state two { hdr.h.c = 2; transition accept; }
    state low_three { hdr.h.c = 3; transition accept; }
}
control I(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    apply { sm.egress_spec = 1; }
}
control E(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
