/* A control instance passed as a constructor argument (P4_16 10.3: a control type
 * as constructor parameter): `Twice(bump) t;` binds `c` to the instance `bump`,
 * and `c.apply(x)` inside Twice applies that very instance. Two wrappers share
 * one instance, so they share its register. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> type; }
header rec_t { bit<8> first; bit<8> second; }
struct headers { ethernet_t eth; rec_t rec; }
struct metadata { }

control stepper_t(inout bit<8> x);

control Bump(inout bit<8> x) {
    register<bit<8>>(1) seen;
    apply {
        bit<8> n;
        seen.read(n, 0);
        n = n + 1;
        seen.write(0, n);
        x = n;
    }
}

control Twice(inout bit<8> x)(stepper_t c) {
    apply {
        c.apply(x);
        x = x + 0x10;
    }
}

control Once(inout bit<8> x)(stepper_t c) {
    apply { c.apply(x); }
}

parser P(packet_in pkt, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.eth); pkt.extract(h.rec); transition accept; }
}
control VC(inout headers h, inout metadata m) { apply { } }
control I(inout headers h, inout metadata m, inout standard_metadata_t sm) {
    Bump() bump;
    Twice(bump) first;
    Once(bump) second;
    apply {
        sm.egress_spec = 1;
        first.apply(h.rec.first);
        second.apply(h.rec.second);
    }
}
control E(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout metadata m) { apply { } }
control D(packet_out pkt, in headers h) { apply { pkt.emit(h.eth); pkt.emit(h.rec); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
