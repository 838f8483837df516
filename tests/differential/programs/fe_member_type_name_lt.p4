/* A struct field may have the name of a type (v1model's externs `counter`,
 * `register`, `meter` are type names): after a `.` the name is a member, so a
 * following `<` is the less-than operator (P4_16 8.6), not the start of type
 * arguments. p4c accepts `meta.counter < 5`. */
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; bit<8> c; }
struct headers { h_t h; }
struct metadata { bit<8> counter; bit<8> register; }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }

control Ig(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        meta.counter = hdr.h.a;
        meta.register = hdr.h.b;
        if (meta.counter < 5) {
            hdr.h.c = 1;
        } else if (meta.register < meta.counter) {
            hdr.h.c = 2;
        } else {
            hdr.h.c = meta.counter < meta.register ? 8w3 : 8w4;
        }
    }
}

control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
