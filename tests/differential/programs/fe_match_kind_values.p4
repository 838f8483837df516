// match_kind members are values of type match_kind in the top-level namespace
// (P4_16 7.1.3; 8.4: they support assignment and == / !=): constants and tuples of them
// may be declared (p4c's issue3091-1), and a parameter or local of the same name hides
// the member in its own scope. bmv2 has no run-time match_kind value, so p4c-bm2-ss
// compiles a program whose match_kind constants are not read at run time.
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
struct headers { h_t h; }
struct metadata { }
typedef tuple<match_kind> kinds_t;
const tuple<match_kind, match_kind> KEY_KINDS = { exact, ternary };
const match_kind PREFIX = lpm;
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control Ig(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    const kinds_t ONE = { exact };
    action set(bit<8> exact) { hdr.h.b = exact; }
    table t {
        key = { hdr.h.a : exact; }
        actions = { set; NoAction; }
        const entries = { 1 : set(0x11); 2 : set(0x22); }
        default_action = NoAction();
    }
    apply {
        bit<8> lpm = hdr.h.b;
        t.apply();
        if (hdr.h.a == 3) { hdr.h.b = lpm + 1; }
        sm.egress_spec = 1;
    }
}
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
