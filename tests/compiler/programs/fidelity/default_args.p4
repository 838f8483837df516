/* Parameters with default values (P4_16 6.8.2): an action's trailing directionless
 * parameter with a default, left out in default_action and in a direct call (the
 * control plane still sets it), a function's in parameter with a default, and action
 * arguments passed by name. */
#include <core.p4>
#include <v1model.p4>
header h_t { bit<16> key; bit<32> a; bit<32> b; }
struct headers { h_t h; }
struct metadata { }
parser P(packet_in pkt, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.h); transition accept; }
}
control VC(inout headers h, inout metadata m) { apply { } }
bit<32> twice(in bit<32> x, in bit<32> k = 2) { return x * k; }
control I(inout headers h, inout metadata m, inout standard_metadata_t sm) {
    action add(bit<32> va, bit<32> vb = 0) {
        h.h.a = h.h.a + va;
        h.h.b = h.h.b + vb;
    }
    action sub(bit<32> x, bit<32> y) { h.h.a = x - y; }
    table t {
        key = { h.h.key : exact; }
        actions = { add; }
        default_action = add(10);
    }
    apply {
        sm.egress_spec = 1;
        t.apply();
        if (h.h.key == 7) { add(1); }
        if (h.h.key == 8) { sub(y = 1, x = 5); }
        h.h.b = h.h.b + twice(3);
    }
}
control E(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout metadata m) { apply { } }
control D(packet_out pkt, in headers h) { apply { pkt.emit(h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
