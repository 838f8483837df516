// A for loop whose bound is only known at run time (so it stays a loop) and whose
// initialiser applies a table (P4_16 12.4: the initialiser runs once, before the first
// test of the condition): the table is applied once, then i counts from f(hit) to lim.
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> k; bit<8> lim; bit<8> n; bit<8> applies; }
struct headers { h_t h; }
struct meta_t { }
parser P(packet_in pkt, out headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
bit<8> start_at(in bool hit) { return hit ? 8w2 : 8w0; }
control Ing(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    action count() { hdr.h.applies = hdr.h.applies + 1; }
    table t {
        key = { hdr.h.k : exact; }
        actions = { count; }
        default_action = count;
        const entries = { 5 : count(); }
    }
    apply {
        bit<8> i;
        bit<8> n = 0;
        for (i = start_at(t.apply().hit); i < hdr.h.lim; i = i + 1) {
            n = n + 1;
        }
        hdr.h.n = n;
        sm.egress_spec = 1;
    }
}
control Eg(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control VC(inout headers hdr, inout meta_t m) { apply { } }
control CC(inout headers hdr, inout meta_t m) { apply { } }
control Dep(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), Dep()) main;
