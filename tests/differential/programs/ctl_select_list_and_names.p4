/* select({a, b}): a list expression as the select argument gives its elements as
 * the keys. With a newtype action parameter, a bool one, an action renamed with
 * @name(".renamed"), a key named with @name, a width from a constant, and the
 * size methods of a header. */
#include <core.p4>
#include <v1model.p4>
const int W = 8;
typedef bit<(W)> byte_t;
type bit<16> Port_t;
header h_t { byte_t a; byte_t b; bit<16> p; bit<8> s; }
typedef h_t alias_t;
struct headers { alias_t h; }
struct metadata { Port_t port; }
const bit<16> BASE = 16w0x100;
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition select({hdr.h.a, hdr.h.b}) {
            (1, 2): special;
            (_, 3): special;
            default: accept;
        }
    }
    state special { hdr.h.s = 0x55; transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control Ig(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    @name(".renamed") action setp(Port_t p, bool flag) {
        meta.port = p;
        if (flag) { hdr.h.s = hdr.h.s | 1; }
    }
    @hidden action nop() { }
    table t { key = { hdr.h.p : exact @name("pkey"); } actions = { setp; nop; } default_action = nop(); }
    apply {
        sm.egress_spec = 1;
        meta.port = (Port_t)BASE;
        t.apply();
        hdr.h.p = (bit<16>)meta.port;
        hdr.h.b = (bit<8>)(hdr.h.minSizeInBytes() + (bit<32>)hdr.h.minSizeInBits());
        log_msg("a={} p={}", {hdr.h.a, hdr.h.p});
    }
}
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
