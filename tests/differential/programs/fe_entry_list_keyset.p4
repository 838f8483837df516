/* A const entry whose keyset is a list expression (P4_16 14.2.1.4: the keyset of an
 * entry is an expression; p4c takes a list `{a, b}` element by element as the keysets of
 * the table's keys, and `{a}` for a table with one key), next to the tuple form. */
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
    action set_c(bit<8> v) { hdr.h.c = v; }
    action set_d(bit<8> v) { hdr.h.d = v; }
    table one_key {
        key = { hdr.h.a : exact; }
        actions = { set_c; NoAction; }
        default_action = NoAction();
        const entries = {
            { (8w0x10 ++ 4w0)[11:4] } : set_c(0x11);
            {8w0x20} : set_c(0x22);
        }
    }
    table two_keys {
        key = { hdr.h.a : exact; hdr.h.b : ternary; }
        actions = { set_d; NoAction; }
        default_action = NoAction();
        const entries = {
            {8w0x10, 8w0x3f} : set_d(0x33);
            (8w0x20, _) : set_d(0x44);
        }
    }
    apply {
        sm.egress_spec = 1;
        one_key.apply();
        two_keys.apply();
    }
}

control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
