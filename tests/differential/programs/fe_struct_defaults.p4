// Struct initializers with ... (P4_16 8.26): fields not named get their defaults (0,
// false, invalid headers, nested structs field by field).
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
header g_t { bit<8> z; }
struct inner_t { bit<8> p; bool q; }
struct s_t { bit<8> x; bit<8> y; inner_t in1; g_t g; }
struct headers { h_t h; }
struct meta_t { s_t s; }
parser P(packet_in pkt, out headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control V(inout headers hdr, inout meta_t m) { apply { } }
control I(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        m.s.y = 5;
        m.s.in1.p = 7;
        m.s = { x = hdr.h.a, ... };
        hdr.h.b = m.s.x + m.s.y + m.s.in1.p + (m.s.g.isValid() ? 8w1 : 8w0);
        s_t t = { ... };
        if (!t.in1.q) { hdr.h.b = hdr.h.b + 0x10 + t.x; }
        sm.egress_spec = 1;
    }
}
control E(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
