/* Constructor parameters of the top-level parser (P4_16 14.1 and 13: `parser P(...)(bool
 * deep, bit<8> tag)` instantiated as `P(true, 8w0x0f)` in main): the arguments are
 * compile-time constants the parser's states and select expressions read. */
#include <core.p4>
#include <v1model.p4>

header a_t { bit<8> x; }
header b_t { bit<8> x; }
struct headers { a_t a; b_t b; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta,
         inout standard_metadata_t sm)(bool deep, bit<8> tag) {
    state start {
        pkt.extract(hdr.a);
        transition select(deep) {
            true: more;
            false: accept;
        }
    }
    state more {
        pkt.extract(hdr.b);
        hdr.b.x = hdr.b.x ^ tag;
        transition accept;
    }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control Ig(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply { sm.egress_spec = 1; }
}
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.a); pkt.emit(hdr.b); } }

V1Switch(P(true, 8w0x0f), VC(), Ig(), Eg(), CC(), D()) main;
