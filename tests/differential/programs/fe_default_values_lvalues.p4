/* `...` as a value (P4_16 8.26): `T x = ...;` is T's default (0, false, an invalid
 * header), `{v, ...}` fills the rest of a tuple or struct with defaults, `{...}` a
 * whole tuple. With the lvalue forms `(x) = v;`, a slice assigned in a parser state
 * from a stack's `.last`, and an `out` argument given as `_` by name. */
#include <core.p4>
#include <v1model.p4>

header e_t { bit<8> a; }
header o_t { bit<16> x; bit<8> n; bit<8> t0; bit<16> t1; bit<8> flags; }
struct pair_t { bit<8> p; bit<8> q; }
struct headers { e_t[2] s; o_t o; }
struct metadata { }

void discard(out bit<8> a) { a = 8w0x99; }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.s.next);
        pkt.extract(hdr.s.next);
        bit<16> x = 16w3;
        x[15:8] = hdr.s.last.a;
        bit<8> n;
        (n) = hdr.s[0].a + 1;
        discard(a = _);
        hdr.o.setValid();
        hdr.o.x = x;
        hdr.o.n = n;
        transition accept;
    }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control Ig(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        bit<8> zero = ...;
        bool no = ...;
        e_t gone = ...;
        e_t also_gone = {#};
        tuple<bit<8>, bit<16>> t = { hdr.s[0].a, ... };
        tuple<bit<8>, bit<16>> u = { ... };
        pair_t pr = { 8w5, ... };
        hdr.o.t0 = t[0] + u[0] + zero;
        hdr.o.t1 = t[1] + u[1] + (bit<16>)pr.q + (bit<16>)pr.p;
        hdr.o.flags = (no ? 8w1 : 8w0) | (gone.isValid() ? 8w2 : 8w0)
                      | (also_gone.isValid() ? 8w4 : 8w0) | 8w0x80;
    }
}
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.o); pkt.emit(hdr.s); } }
V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
