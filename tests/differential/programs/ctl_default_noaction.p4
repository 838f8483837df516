/* A table without `default_action` behaves as if it declared
 * `default_action = NoAction()` (p4c's front end adds it): a miss runs no action, even
 * when the table has a single action, so `hit` is false and `action_run` is NoAction. */
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; bit<8> c; bit<8> d; }
struct headers { h_t h; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }

control Ig(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action mark(bit<8> v) { hdr.h.b = v; }
    action only() { hdr.h.c = 8w0xdd; }
    table single { key = { hdr.h.a : exact; } actions = { only; } }
    table sw { key = { hdr.h.a : exact; } actions = { mark; } }

    apply {
        sm.egress_spec = 1;
        single.apply();
        switch (sw.apply().action_run) {
            mark: { hdr.h.d = 8w1; }
            default: { hdr.h.d = 8w2; }
        }
    }
}

control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
