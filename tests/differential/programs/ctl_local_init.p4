/* Control-level locals declared with an initialiser outside `apply` are initialised
 * each time the control is applied (P4_16 spec: declarations in a control's body run
 * on every apply), before the apply block's statements. */
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; bit<8> c; bit<8> d; }
struct headers { h_t h; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }

control Ig(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    bit<8> base = 8w0x10;
    h_t tmp = { 8w1, 8w2, 8w3, 8w4 };
    bit<8> uses_base = base + 8w1;

    apply {
        sm.egress_spec = 1;
        hdr.h.a = hdr.h.a + base;
        base = 8w0;                  // the next packet still starts from 0x10
        hdr.h.b = tmp.b;
        tmp.b = 8w0xff;
        if (tmp.isValid()) {
            hdr.h.c = 8w1;
        } else {
            hdr.h.c = 8w0;
        }
        hdr.h.d = uses_base;
    }
}

control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
