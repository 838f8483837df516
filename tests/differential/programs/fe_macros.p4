// Function-like macros as cpp expands them: nested-paren arguments, ##, #if arithmetic,
// variadics, macros expanding to other macros, multi-line definitions and invocations.
#include <core.p4>
#include <v1model.p4>
#define WIDTH 8
#define FIELD(n) bit<WIDTH> n;
#define H(f) hdr.h.f
#define ADD(a, b) ((a) + (b))
#define TWICE(x) ADD(x, x)
#define SET(dst, ...) H(dst) = ADD(__VA_ARGS__)
#define ACTION_NAME(prefix, n) prefix ## _ ## n
#define MAX(a, \
            b) ((a) > (b) ? (a) : (b))
header h_t { FIELD(a) FIELD(b) FIELD(c) FIELD(d) }
struct headers { h_t h; }
struct meta_t { }
parser P(packet_in pkt, out headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control V(inout headers hdr, inout meta_t m) { apply { } }
control I(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    action ACTION_NAME(set, b)() { H(b) = TWICE(H(a)); }
    apply {
        ACTION_NAME(set, b)();
        SET(c, H(a), (bit<8>)MAX(3, 4));
#if ADD(WIDTH, 0) * 2 == 16 && defined(TWICE) && !defined(NOT_DEFINED)
        H(d) = MAX(H(a),
                   H(d));
#else
        H(d) = 0;
#endif
        sm.egress_spec = 1;
    }
}
control E(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
