/* Whole-header assignment of a header with a varbit field (assign_header): the copy
 * has the source's current varbit length. */
#include <core.p4>
#include <v1model.p4>

header len_t { bit<8> len; }
header opt_t { varbit<32> data; }
header out_t { bit<8> mark; }
struct headers { len_t l; opt_t o; opt_t o2; out_t m; }
struct metadata { }

parser P(packet_in pkt, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.l);
        pkt.extract(h.o, (bit<32>)h.l.len * 8);
        pkt.extract(h.m);
        transition accept;
    }
}
control VC(inout headers h, inout metadata m) { apply { } }
control I(inout headers h, inout metadata m, inout standard_metadata_t sm) {
    apply {
        h.o2 = h.o;
        h.o.setInvalid();
        h.m.mark = 0xaa;
        sm.egress_spec = 2;
    }
}
control E(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control C(inout headers h, inout metadata m) { apply { } }
control D(packet_out pkt, in headers h) {
    apply { pkt.emit(h.l); pkt.emit(h.o); pkt.emit(h.o2); pkt.emit(h.m); }
}
V1Switch(P(), VC(), I(), E(), C(), D()) main;
