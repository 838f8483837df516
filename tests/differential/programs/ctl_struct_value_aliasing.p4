/* A struct value that reads what it is assigned to: `meta.p = swap(meta.p)` with
 * swap returning `{ x = p.y, y = p.x }` must evaluate the whole value first (P4_16
 * 11.1), not field by field. With named arguments in any order, a default
 * parameter value, a control constructor argument given by name, and exit. */
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; bit<8> c; bit<8> d; }
struct headers { h_t h; }
struct pair_t { bit<8> x; bit<8> y; }
struct metadata { pair_t p; }
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
pair_t swap(in pair_t p) { return { x = p.y, y = p.x }; }
bit<8> pick(in bit<8> first, in bit<8> second, bool which) {
    if (which) { return first; }
    return second;
}
void bump(inout bit<8> v, in bit<8> by) { v = v + by; }
control Sub(inout bit<8> v)(bit<8> k) {
    action add() { v = v + k; }
    apply { add(); }
}
control Ig(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    Sub(8w3) s3;
    Sub(k = 8w5) s5;
    action setc(bit<8> v = 8w9) { hdr.h.c = v; }
    table t { key = { hdr.h.a: exact; } actions = { setc; } default_action = setc(); }
    apply {
        sm.egress_spec = 1;
        meta.p = { hdr.h.a, hdr.h.b };
        meta.p = swap(meta.p);
        hdr.h.a = meta.p.x;
        hdr.h.b = meta.p.y;
        hdr.h.d = pick(second = hdr.h.a, first = hdr.h.b, which = hdr.h.a > 8w0x10);
        bump(by = 8w2, v = hdr.h.d);
        s3.apply(hdr.h.d);
        s5.apply(v = hdr.h.d);
        t.apply();
        if (hdr.h.c == 0xcc) { exit; }
        hdr.h.c = hdr.h.c + 1;
    }
}
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
