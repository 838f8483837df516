// for (T x in f(...)) where the collection is a call returning a header stack (P4_16
// 12.5: the collection is evaluated once, before the first iteration): the call, and
// the table its argument applies, run once, not once per element.
#include <core.p4>
#include <v1model.p4>
header e_t { bit<8> v; }
header out_t { bit<8> sum; bit<8> calls; bit<8> applies; }
struct headers { e_t[2] st; out_t o; }
struct meta_t { }
parser P(packet_in pkt, out headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.st.next); pkt.extract(hdr.st.next); pkt.extract(hdr.o); transition accept; }
}
e_t[2] pick(in bool hit, inout bit<8> calls, in e_t[2] s) {
    calls = calls + 1;
    return s;
}
control Ing(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    action count() { hdr.o.applies = hdr.o.applies + 1; }
    table t { actions = { count; } default_action = count; }
    apply {
        bit<8> sum = 0;
        for (e_t x in pick(t.apply().hit, hdr.o.calls, hdr.st)) {
            sum = sum + x.v;
        }
        hdr.o.sum = sum;
        sm.egress_spec = 1;
    }
}
control Eg(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control VC(inout headers hdr, inout meta_t m) { apply { } }
control CC(inout headers hdr, inout meta_t m) { apply { } }
control Dep(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.st); pkt.emit(hdr.o); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), Dep()) main;
