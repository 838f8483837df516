/* Actions with in/out/inout parameters (P4_16 spec 6.8 "Calling convention"): called
 * directly from the apply block and from another action (copy-in before the body,
 * copy-out after it, so writes through an alias of an inout argument are overwritten),
 * an early `return` in an action, and a table action list binding the directional
 * parameter while the directionless one comes from the control plane. */
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
    action add_to(inout bit<8> x, in bit<8> y) { x = x + y; }
    action swap(inout bit<8> x, inout bit<8> y) { bit<8> t = x; x = y; y = t; }
    action clamp_or_inc(inout bit<8> x) {
        if (x > 8w100) {
            x = 8w100;
            return;
        }
        x = x + 8w1;
    }
    action twice(inout bit<8> x) { add_to(x, x); }
    action alias_write(inout bit<8> x) {
        hdr.h.d = x;
        x = 8w7;
        hdr.h.d = hdr.h.d + x;      // overwritten by the copy-out of x
    }
    action set_out(out bit<8> o, bit<8> v) { o = v; }

    table t {
        key = { hdr.h.a : exact; }
        actions = { set_out(hdr.h.c); NoAction; }
        default_action = NoAction();
    }

    apply {
        sm.egress_spec = 1;
        swap(hdr.h.a, hdr.h.b);
        twice(hdr.h.c);
        add_to(hdr.h.c, hdr.h.a);
        clamp_or_inc(hdr.h.b);
        alias_write(hdr.h.d);
        t.apply();
    }
}

control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
