// A header stack's `.last` and `.next` read as values in a parser (P4_16 8.18): `.last`
// is the element at nextIndex - 1 (copied here as a whole header), `.next.f` the field
// of the element at nextIndex (set valid beforehand so that its value is defined).
#include <core.p4>
#include <v1model.p4>
header e_t { bit<8> bos; bit<8> v; }
header o_t { bit<8> last_v; bit<8> next_v; }
struct headers { e_t[3] st; e_t copy; o_t o; }
struct meta_t { }
parser P(packet_in pkt, out headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        hdr.st[2] = { 8w0, 8w0x42 };
        transition parse_e;
    }
    state parse_e {
        pkt.extract(hdr.st.next);
        hdr.copy = hdr.st.last;
        transition select(hdr.st.last.bos) { 1: done; default: parse_e; }
    }
    state done {
        hdr.o.setValid();
        hdr.o.last_v = hdr.st.last.v;
        hdr.o.next_v = hdr.st.next.v;
        transition select(hdr.st.next.v) { 0x42: accept; default: reject; }
    }
}
control V(inout headers hdr, inout meta_t m) { apply { } }
control I(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    apply { sm.egress_spec = 1; }
}
control E(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers hdr) {
    apply { pkt.emit(hdr.st); pkt.emit(hdr.copy); pkt.emit(hdr.o); }
}
V1Switch(P(), V(), I(), E(), C(), D()) main;
