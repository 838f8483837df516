/* int<N> values at run time: sign extension through casts, arithmetic shift right,
 * signed comparison, negation and subtraction wrapping in two's complement. */
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> x; bit<16> ext; int<8> shr; bit<8> lt; int<8> neg; int<8> sub; }
struct headers { h_t h; }
struct metadata { }

parser P(packet_in pkt, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.h); transition accept; }
}
control VC(inout headers h, inout metadata m) { apply { } }
control I(inout headers h, inout metadata m, inout standard_metadata_t sm) {
    apply {
        int<8> s = (int<8>)h.h.x;
        h.h.ext = (bit<16>)(int<16>)s;
        h.h.shr = s >> 2;
        h.h.lt = (s < 8s1) ? 8w1 : 8w0;
        h.h.neg = -s;
        h.h.sub = s - 8s100;
        sm.egress_spec = 1;
    }
}
control E(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control C(inout headers h, inout metadata m) { apply { } }
control D(packet_out pkt, in headers h) { apply { pkt.emit(h.h); } }
V1Switch(P(), VC(), I(), E(), C(), D()) main;
