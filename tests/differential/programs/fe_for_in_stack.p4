// for (T x in stack) (P4_16 1.2.5): one iteration per element, in index order, with
// break; and for (T x in lo .. hi) over a range with continue.
#include <core.p4>
#include <v1model.p4>
header item_t { bit<8> v; }
header out_t { bit<8> sum; bit<8> first_big; bit<8> odd_sum; }
struct headers { item_t[4] items; out_t o; }
struct meta_t { }
parser P(packet_in pkt, out headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.items.next);
        pkt.extract(hdr.items.next);
        pkt.extract(hdr.items.next);
        pkt.extract(hdr.items.next);
        pkt.extract(hdr.o);
        transition accept;
    }
}
control V(inout headers hdr, inout meta_t m) { apply { } }
control I(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        bit<8> sum = 0;
        for (item_t it in hdr.items) {
            sum = sum + it.v;
        }
        hdr.o.sum = sum;
        hdr.o.first_big = 0;
        for (item_t it in hdr.items) {
            if (it.v > 0x10) {
                hdr.o.first_big = it.v;
                break;
            }
        }
        bit<8> odd = 0;
        for (bit<8> i in 0 .. 7) {
            if (i % 2 == 0) {
                continue;
            }
            odd = odd + i;
        }
        hdr.o.odd_sum = odd;
        sm.egress_spec = 1;
    }
}
control E(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.items); pkt.emit(hdr.o); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
