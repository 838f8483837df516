/* resubmit/recirculate/clone3 with data that is not only fields: a constant in the
 * list preserves nothing (p4c leaves it a constant, a `hexstr` element), and any other
 * value (`m.lost + 1`) is copied into a temporary first, whose value is what travels
 * (p4c's RemoveComplexExpressions); simple_switch refuses a field list with an
 * `expression` element when it loads the program. Only the fields named in the list
 * keep their value in the next pass: m.keep does, m.lost does not. */
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> op; bit<8> a; bit<8> b; bit<8> c; }
struct headers { h_t h; }
struct metadata { bit<8> keep; bit<8> lost; }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control Ig(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action again() {
        resubmit({meta.keep, 8w7, meta.lost + 1});
    }
    apply {
        if (sm.instance_type == 0) {
            meta.keep = hdr.h.a;
            meta.lost = hdr.h.b;
            if (hdr.h.op == 1) {
                again();
            } else if (hdr.h.op == 2) {
                recirculate(8w9);
            } else if (hdr.h.op == 3) {
                sm.egress_spec = 3;
                clone3(CloneType.I2E, 32w5, {meta.keep, 16w3, meta.lost ++ meta.keep});
            }
        } else {
            hdr.h.b = meta.keep;
            hdr.h.c = meta.lost;
            sm.egress_spec = 1;
        }
    }
}
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        if (sm.instance_type == 1) {
            hdr.h.c = meta.keep;
            hdr.h.b = meta.lost;
        }
    }
}
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
