/* Operands are evaluated left to right (P4_16 8.1): in `{ a, f(a) }` and `a + f(a)`,
 * where the function f writes its inout argument a, the first operand is read before
 * f runs. Also for a control-level local whose initialiser calls f: initialisers run
 * at the start of apply, in declaration order, calls included. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> type; }
header pair_t { bit<8> x; bit<8> y; bit<8> z; }
struct headers { ethernet_t eth; pair_t p; }
struct metadata { }

bit<8> twice(inout bit<8> a) {
    a = a + a;
    return 8w0x40;
}

parser P(packet_in pkt, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.eth); pkt.extract(h.p); transition accept; }
}
control VC(inout headers h, inout metadata m) { apply { } }
control I(inout headers h, inout metadata m, inout standard_metadata_t sm) {
    // x is read (old value), then twice() doubles it
    pair_t init = { h.p.x, twice(h.p.x), 8w0 };
    apply {
        sm.egress_spec = 1;
        if (h.eth.type == 0x0001) {
            h.p = init;
        } else {
            // y + twice(y): the old y plus 0x40; y is doubled before the sum is stored
            h.p.z = h.p.y + twice(h.p.y);
        }
    }
}
control E(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout metadata m) { apply { } }
control D(packet_out pkt, in headers h) { apply { pkt.emit(h.eth); pkt.emit(h.p); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
