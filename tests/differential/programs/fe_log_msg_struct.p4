/* log_msg with a header or a struct in its list (P4_16 v1model `log_msg(string, in T
 * data)`): p4c's FlattenLogMsg writes each such item's `{}` as `(name:{},...)` over its
 * fields and lists the fields; we wrote a "header" element, on which simple_switch
 * aborts ("Default switch case should not be reachable"). */
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<16> b; }
struct inner_t { bit<4> x; bit<4> y; }
struct metadata { inner_t inr; bit<8> n; }
struct headers { h_t h; }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}

control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        meta.inr.x = 3;
        meta.inr.y = 4;
        meta.n = hdr.h.a;
        log_msg("h={} valid={}", {hdr.h, hdr.h.isValid()});
        log_msg("meta={} a={}", {meta, hdr.h.a});
        hdr.h.b = hdr.h.b + 1;
        sm.egress_spec = 1;
    }
}

control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control V(inout headers hdr, inout metadata meta) { apply { } }
control C(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), V(), I(), E(), C(), D()) main;
