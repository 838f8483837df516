// generic struct and header types (struct Pair<T>, header GH<T>) specialised by their uses
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
struct Pair<T> { T left; T right; }
header GH<T> { T x; }
struct headers { h_t h; GH<bit<16>> g; }
struct meta_t { Pair<bit<8>> p; }
parser P(packet_in pkt, out headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); pkt.extract(hdr.g); transition accept; }
}
control V(inout headers hdr, inout meta_t m) { apply { } }
control I(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        Pair<bit<8>> q = { left = hdr.h.a, right = hdr.h.b };
        m.p = q;
        hdr.h.a = m.p.right;
        hdr.h.b = q.left;
        hdr.g.x = hdr.g.x + 1;
        sm.egress_spec = 1;
    }
}
control E(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); pkt.emit(hdr.g); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
