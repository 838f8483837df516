/* Methods and fields of a function's result (P4_16 8.17: a call is an expression of its
 * return type): `f().isValid()` on a returned header, a returned header union's member and
 * a returned header stack's element, and a field of a returned header. The call runs
 * before the method or field access. */
#include <core.p4>
#include <v1model.p4>

header in_t { bit<8> a; bit<8> b; }
header out_t { bit<8> v1; bit<8> v2; bit<8> v3; bit<8> v4; }
header H { bit<8> x; }
header_union U { H h; }
struct headers { in_t i; out_t o; }
struct metadata { }

H mk(in bit<8> v) {
    H h;
    if (v != 0) {
        h.setValid();
        h.x = v;
    }
    return h;
}

U mk_union(in bit<8> v) {
    U u;
    if (v > 8w10) {
        u.h.setValid();
        u.h.x = v;
    }
    return u;
}

H[2] mk_stack(in bit<8> v) {
    H[2] s;
    if (v > 8w20) {
        s[1].setValid();
        s[1].x = v;
    }
    return s;
}

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.i); pkt.extract(hdr.o); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }

control Ig(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (mk(hdr.i.a).isValid()) {
            hdr.o.v1 = 1;
        } else {
            hdr.o.v1 = 2;
        }
        hdr.o.v2 = mk(hdr.i.b | 8w1).x;
        if (mk_union(hdr.i.a).h.isValid()) {
            hdr.o.v3 = 3;
        } else {
            hdr.o.v3 = 4;
        }
        if (mk_stack(hdr.i.a)[1].isValid()) {
            hdr.o.v4 = 5;
        } else {
            hdr.o.v4 = 6;
        }
    }
}

control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.i); pkt.emit(hdr.o); } }

V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
