/* Calls with side effects where the spec evaluates them conditionally (8.6 `&&`/`||`
 * short-circuit, 8.7 `?:` evaluates only the chosen branch), copy-out of an inout
 * argument after the call (6.8), and non-void functions called as statements. */
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; bit<8> c; bit<8> d; }
struct headers { h_t h; }
struct metadata { }

bit<8> plus_one(in bit<8> x) { return x + 8w1; }

bit<8> bump(inout bit<8> x) {
    x = x + 8w1;
    return x;
}

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }

control Ig(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        bool flag = hdr.h.a == 8w0 || bump(hdr.h.b) == 8w5;
        hdr.h.c = hdr.h.a == 8w1 ? bump(hdr.h.d) : 8w0x77;
        bump(hdr.h.c);
        plus_one(hdr.h.c);           // value dropped, no effect
        if (flag) {
            hdr.h.a = hdr.h.a | 8w0x80;
        }
    }
}

control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
