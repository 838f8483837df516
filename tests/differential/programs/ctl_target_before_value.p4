/* Evaluation order (P4_16 8.1, 6.8): an assignment's target is evaluated before its
 * right-hand side, and a call's out/inout arguments are bound (their stack index
 * read) when the call starts, not when the values are copied out. Here the called
 * functions change the very field that indexes the stack. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> type; }
header sel_t { bit<8> i; }
header val_t { bit<8> v; }
struct headers { ethernet_t eth; sel_t sel; val_t[3] vals; }
struct metadata { }

bit<8> bump(inout bit<8> i) {
    i = i + 1;
    return 8w0xaa;
}

void move_and_set(inout bit<8> i, out bit<8> dst) {
    i = 2;
    dst = 8w0xbb;
}

parser P(packet_in pkt, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.eth); pkt.extract(h.sel);
        pkt.extract(h.vals.next); pkt.extract(h.vals.next); pkt.extract(h.vals.next);
        transition accept;
    }
}
control VC(inout headers h, inout metadata m) { apply { } }
control I(inout headers h, inout metadata m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (h.eth.type == 0x0001) {
            // element chosen with the old i, then i is incremented
            h.vals[h.sel.i].v = bump(h.sel.i);
        } else {
            // dst is bound to vals[old i] before the body sets i to 2
            move_and_set(h.sel.i, h.vals[h.sel.i].v);
        }
    }
}
control E(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout metadata m) { apply { } }
control D(packet_out pkt, in headers h) {
    apply { pkt.emit(h.eth); pkt.emit(h.sel); pkt.emit(h.vals); }
}
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
