/* Table keys that call functions (P4_16 14.2.1.2: a key is any expression; p4c
 * requires a @name for one that is not a field, slice, mask or isValid()). A
 * function whose body is more than `return expr;`, or that has an inout parameter,
 * is inlined before the apply; as p4c (SideEffectOrdering on keys), every key of
 * such a table is then computed in key order before the apply, so `meta.cnt` in
 * t2 is read before bump() increments it, and the increment stays after the apply. */
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; bit<8> c; bit<8> o; bit<8> p; bit<8> n; }
struct headers { h_t h; }
struct metadata { bit<8> cnt; }
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
bit<8> f(in bit<8> x) {
    if (x > 0x80) { return x; }
    return x ^ 0x0f;
}
bit<8> bump(inout bit<8> x) { x = x + 1; return x; }
control Ig(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action set_o(bit<8> v) { hdr.h.o = v; }
    action set_p(bit<8> v) { hdr.h.p = v; }
    table t {
        key = { f(hdr.h.a) : exact @name("fa"); hdr.h.b + 1 : exact @name("b1");
                hdr.h.isValid() : exact; }
        actions = { set_o; NoAction; }
        default_action = NoAction();
    }
    table t2 {
        key = { meta.cnt : exact; bump(meta.cnt) : exact @name("c2"); }
        actions = { set_p; NoAction; }
        default_action = NoAction();
    }
    apply {
        sm.egress_spec = 1;
        t.apply();
        meta.cnt = hdr.h.c;
        t2.apply();
        hdr.h.n = meta.cnt;
    }
}
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
