/* Parameter default values: actions and functions with defaults, named arguments
 * combined with defaults, a table action with a directionless default. */
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> x; bit<8> y; bit<8> z; bit<8> w; }
struct headers { h_t h; }
struct metadata { }

bit<8> add(in bit<8> a, in bit<8> b = 5) { return a + b; }

parser P(packet_in pkt, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.h); transition accept; }
}
control VC(inout headers h, inout metadata m) { apply { } }
control I(inout headers h, inout metadata m, inout standard_metadata_t sm) {
    action set_y(bit<8> v = 7) { h.h.y = v; }
    action mix(in bit<8> a, in bit<8> b = 3) { h.h.w = a - b; }
    table t {
        key = { h.h.x : exact; }
        actions = { set_y; NoAction; }
        default_action = set_y();
    }
    apply {
        t.apply();
        h.h.z = add(h.h.x) + add(b = 1, a = h.h.x);
        mix(a = h.h.x);
        sm.egress_spec = 1;
    }
}
control E(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control C(inout headers h, inout metadata m) { apply { } }
control D(packet_out pkt, in headers h) { apply { pkt.emit(h.h); } }
V1Switch(P(), VC(), I(), E(), C(), D()) main;
