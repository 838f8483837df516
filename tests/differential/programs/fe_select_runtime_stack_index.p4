/* A select key reading a field of a header-stack element with a run-time index
 * (`select(hdr.seg[n - 1].bos)`, P4_16 8.18 array indexing with a non-constant index):
 * a loop over the stack that stops at the element whose bos bit is set. bmv2 reads it
 * as access_field on dereference_header_stack (what p4c writes); we refused it. */
#include <core.p4>
#include <v1model.p4>

header seg_t { bit<7> port; bit<1> bos; }
header tail_t { bit<8> v; }
struct headers { seg_t[3] seg; tail_t tail; }
struct metadata { bit<8> n; }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    bit<32> n = 0;
    state start { transition parse_seg; }
    state parse_seg {
        pkt.extract(hdr.seg[n]);
        n = n + 1;
        transition select(hdr.seg[n - 1].bos, hdr.seg[n - 1].port) {
            (1, 0x7f): reject;
            (1, _): parse_tail;
            default: parse_seg;
        }
    }
    state parse_tail {
        meta.n = (bit<8>)n;
        pkt.extract(hdr.tail);
        transition accept;
    }
}

control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        if (hdr.tail.isValid()) {
            hdr.tail.v = meta.n;
            sm.egress_spec = 2;
        } else {
            sm.egress_spec = 1;
        }
    }
}

control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control V(inout headers hdr, inout metadata meta) { apply { } }
control C(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }

V1Switch(P(), V(), I(), E(), C(), D()) main;
