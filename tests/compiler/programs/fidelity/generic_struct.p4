/* Generic structs (P4_16 1.2.x): struct S<T> { T f; } used as S<bit<8>>, nested
 * and as a local, and a generic header specialised with a fixed width. */
#include <core.p4>
#include <v1model.p4>

struct pair_t<T> { T first; T second; }
header gen_h<T> { T a; bit<8> b; }
header h_t { bit<8> x; bit<8> y; bit<16> z; }
struct headers { h_t h; gen_h<bit<16>> g; }
struct metadata { pair_t<bit<8>> p; }

parser P(packet_in pkt, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.h); pkt.extract(h.g); transition accept; }
}
control VC(inout headers h, inout metadata m) { apply { } }
control I(inout headers h, inout metadata m, inout standard_metadata_t sm) {
    apply {
        pair_t<bit<16>> w = { first = h.h.z, second = 16w1 };
        m.p.first = h.h.y;
        m.p.second = h.h.x;
        h.h.x = m.p.first;
        h.h.y = m.p.second;
        h.h.z = w.first + w.second;
        h.g.a = h.g.a + 1;
        sm.egress_spec = 3;
    }
}
control E(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control C(inout headers h, inout metadata m) { apply { } }
control D(packet_out pkt, in headers h) { apply { pkt.emit(h.h); pkt.emit(h.g); } }
V1Switch(P(), VC(), I(), E(), C(), D()) main;
