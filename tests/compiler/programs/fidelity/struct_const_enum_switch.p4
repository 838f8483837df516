/* Struct-valued constants at top level and in a control, read in expressions and
 * assigned whole; switch on a plain (non-serializable) enum value. */
#include <core.p4>
#include <v1model.p4>

struct pair_t { bit<8> a; bit<8> b; }
enum Kind { Small, Big, Other }
const pair_t TOP = { a = 1, b = 2 };
header h_t { bit<8> x; bit<8> y; bit<8> k; }
struct headers { h_t h; }
struct metadata { pair_t p; }

parser P(packet_in pkt, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.h); transition accept; }
}
control VC(inout headers h, inout metadata m) { apply { } }
control I(inout headers h, inout metadata m, inout standard_metadata_t sm) {
    const pair_t LOCAL = { b = 20, a = 10 };
    apply {
        Kind kind = Kind.Other;
        if (h.h.x < 10) { kind = Kind.Small; } else if (h.h.x > 100) { kind = Kind.Big; }
        m.p = TOP;
        switch (kind) {
            Kind.Small: { h.h.y = m.p.a + TOP.b; }
            Kind.Big: { h.h.y = LOCAL.a + LOCAL.b; m.p = LOCAL; }
            default: { h.h.y = 0xee; }
        }
        h.h.k = m.p.a;
        sm.egress_spec = 1;
    }
}
control E(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control C(inout headers h, inout metadata m) { apply { } }
control D(packet_out pkt, in headers h) { apply { pkt.emit(h.h); } }
V1Switch(P(), VC(), I(), E(), C(), D()) main;
