/* Table keys that read a header-stack element with a run-time index (P4_16 8.18: the
 * index is any expression of type bit<W>; 14.2.1.1: a key is any expression). Each key
 * takes the element the index selects when the table is applied; the control plane sees
 * the keys under their own names. */
#include <core.p4>
#include <v1model.p4>

header i_t { bit<8> idx; }
header e_t { bit<8> a; bit<8> b; }
struct headers { i_t i; e_t[3] s; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta,
         inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.i);
        pkt.extract(hdr.s.next);
        pkt.extract(hdr.s.next);
        pkt.extract(hdr.s.next);
        transition accept;
    }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control Ig(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action fwd(bit<9> port) { sm.egress_spec = port; }
    table t {
        key = {
            hdr.s[hdr.i.idx].a        : exact;
            hdr.s[hdr.i.idx + 8w1].b  : exact @name("next_b");  // p4c: not a name by itself
        }
        actions = { fwd; }
        const entries = {
            (8w0x11, 8w0x22) : fwd(1);
            (8w0x33, 8w0x44) : fwd(2);
        }
        default_action = fwd(4);
    }
    apply {
        t.apply();
        // the index changes after the apply: the key was read before it
        hdr.i.idx = hdr.i.idx + 8w0x80;
    }
}
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }

V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
