/* A block statement with annotations (P4_16 grammar: blockStatement with optional
 * annotations), e.g. `@atomic { ... }` around a register read-modify-write: on bmv2
 * the annotation changes nothing and the block runs in order. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> type; }
header count_t { bit<32> n; }
struct headers { ethernet_t eth; count_t c; }
struct metadata { }

parser P(packet_in pkt, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.eth); pkt.extract(h.c); transition accept; }
}
control VC(inout headers h, inout metadata m) { apply { } }
control I(inout headers h, inout metadata m, inout standard_metadata_t sm) {
    register<bit<32>>(1) total;
    apply {
        sm.egress_spec = 1;
        @atomic {
            bit<32> t;
            total.read(t, 0);
            t = t + h.c.n;
            total.write(0, t);
            h.c.n = t;
        }
        @name("outer") @atomic { h.eth.type = 0x0801; }
    }
}
control E(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout metadata m) { apply { } }
control D(packet_out pkt, in headers h) { apply { pkt.emit(h.eth); pkt.emit(h.c); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
