/* Concatenation takes each operand's bits (P4_16 spec, concatenation): a signed
 * right operand contributes its W bits, not its sign-extended value (bmv2 holds a
 * signed field as a negative number). */
#include <core.p4>
#include <v1model.p4>

header h_t { int<8> s; bit<8> u; bit<16> r1; bit<16> r2; }
struct headers { h_t h; }
struct metadata { }

parser P(packet_in pkt, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.h); transition accept; }
}
control VC(inout headers h, inout metadata m) { apply { } }
control I(inout headers h, inout metadata m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        bit<16> b = h.h.u ++ h.h.s;
        int<16> a = h.h.s ++ h.h.u;
        h.h.r1 = (bit<16>)a;
        h.h.r2 = b;
    }
}
control E(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout metadata m) { apply { } }
control D(packet_out pkt, in headers h) { apply { pkt.emit(h.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
