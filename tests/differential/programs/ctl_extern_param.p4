// An extern object passed to a sub-control (P4_16 6.8, 7.2.x: extern objects are passed
// by reference, directionless): the sub-control's register reads and writes the
// caller's instance, at each of its applies.
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> idx; bit<8> res; }
struct headers { h_t h; }
struct meta_t { }
parser P(packet_in pkt, out headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control V(inout headers hdr, inout meta_t m) { apply { } }
control Bump(inout h_t h, register<bit<8>> r) {
    bit<8> v;
    apply {
        r.read(v, (bit<32>) h.idx);
        v = v + 1;
        r.write((bit<32>) h.idx, v);
        h.res = v;
    }
}
control I(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    register<bit<8>>(4) regs;
    Bump() bump;
    apply {
        bump.apply(hdr.h, regs);
        bump.apply(hdr.h, regs);
        sm.egress_spec = 1;
    }
}
control E(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
