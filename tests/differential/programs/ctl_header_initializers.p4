/* A header given a value by a struct expression (P4_16 8.13, 8.26): it becomes
 * valid, each field by name whatever the order written, `...` gives the fields not
 * named 0. A struct's header field that `...` fills stays invalid. A local header
 * declared with an initializer is valid; one declared without is not. */
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> x; bit<8> y; bit<16> z; }
struct pair_t { h_t h; bit<8> tag; }
struct headers { h_t a; h_t b; h_t c; h_t d; h_t e; h_t f; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.f); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control Ig(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        hdr.a = { ... };
        hdr.b = { z = 0x0102, x = 3, ... };
        hdr.c = { y = hdr.f.x, z = 7, x = hdr.f.y };
        h_t local = { y = 9, ... };
        h_t unset;
        pair_t p = { tag = 4, ... };
        if (!unset.isValid() && !p.h.isValid() && local.isValid()) {
            hdr.d = local;
            hdr.d.x = p.tag;
        }
        if (hdr.f.x == 0xee) {
            hdr.e = { 1, 2, 3 };
        }
        hdr.f.setInvalid();
        sm.egress_spec = 1;
    }
}
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) {
    apply { pkt.emit(hdr.a); pkt.emit(hdr.b); pkt.emit(hdr.c); pkt.emit(hdr.d); pkt.emit(hdr.e); }
}
V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
