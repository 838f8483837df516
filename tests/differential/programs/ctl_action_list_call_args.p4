/* A table's actions list binding an action's directional parameters to function calls
 * with side effects (P4_16 13.1 and 14.2.1.2: the arguments are evaluated when the action
 * runs, left to right; p4c's RemoveActionParameters puts them at the start of the action
 * body): each hit runs bump twice, in order; a miss runs neither. */
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; bit<8> c; }
struct headers { h_t h; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }

bit<8> bump(inout bit<8> x) {
    x = x + 3;
    return x << 1;
}

control Ig(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action diff(in bit<8> y, in bit<8> z) { hdr.h.c = y - z; }
    table t {
        key = { hdr.h.a : exact; }
        actions = { diff(bump(hdr.h.b), bump(hdr.h.b)); NoAction; }
        default_action = NoAction();
    }
    apply {
        sm.egress_spec = 1;
        t.apply();
    }
}

control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
