/* `t.apply().hit` / `.miss` inside expressions: an operand of `||` and `&&` and the
 * condition of `?:`. The spec (8.7, 8.6) evaluates the right operand of `||` / `&&`
 * only when the left one does not decide the result, so the table on the right is
 * applied (its action runs) only then. */
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; bit<8> c; bit<8> d; }
struct headers { h_t h; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }

control Ig(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action set_b(bit<8> v) { hdr.h.b = v; }
    action set_c(bit<8> v) { hdr.h.c = v; }
    table t1 { key = { hdr.h.a : exact; } actions = { set_b; NoAction; } default_action = NoAction(); }
    table t2 { key = { hdr.h.a : exact; } actions = { set_c; NoAction; } default_action = NoAction(); }
    table t3 { key = { hdr.h.a : exact; } actions = { set_c; NoAction; } default_action = NoAction(); }

    apply {
        sm.egress_spec = 1;
        bool first = hdr.h.d == 8w0;
        hdr.h.d = first || t2.apply().hit ? 8w1 : 8w2;
        if (hdr.h.d == 8w2 && t3.apply().hit) {
            hdr.h.b = 8w0xee;
        }
        hdr.h.a = t1.apply().miss ? 8w0x10 : 8w0x20;
    }
}

control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
