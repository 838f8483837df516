/* Indexed bit slices (P4_16 8.5): `e[lo +: w]` is the w bits of e from bit lo up,
 * i.e. e[lo + w - 1 : lo]; lo and w are compile-time constants (a named constant here),
 * and the slice may be read or assigned. */
#include <core.p4>
#include <v1model.p4>

header h_t { bit<16> a; bit<8> b; bit<8> c; bit<8> d; }
struct headers { h_t h; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }

control Ig(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    const bit<32> LO = 2;
    apply {
        sm.egress_spec = 1;
        hdr.h.b = hdr.h.a[4 +: 8];
        hdr.h.c[0 +: 4] = hdr.h.a[12 +: 4];
        hdr.h.d = hdr.h.a[LO +: 8];
    }
}

control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
