/* Locals with an initialiser declared in a sub-control (outside its apply) are set
 * each time that instance is applied: the second apply of the same instance sees the
 * initial value again, not what the first apply left. */
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; bit<8> c; bit<8> d; }
struct headers { h_t h; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }

control Acc(inout bit<8> x, in bit<8> v) {
    bit<8> total = 8w0x40;
    apply {
        total = total + v;
        x = total;
    }
}

control Ig(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    Acc() acc;
    apply {
        sm.egress_spec = 1;
        acc.apply(hdr.h.b, hdr.h.a);
        acc.apply(hdr.h.c, hdr.h.a);
    }
}

control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
