/* Signed values through casts, saturating arithmetic and a switch on a bit<8>
 * value (P4_16 12.7.3, fall-through labels): a cast takes its arithmetic from the
 * destination type (int<W> read as bit<W> is its bits, not a negative number), then
 * widening zero-extends a bit<W> and sign-extends an int<W>. */
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> op; bit<8> a; bit<8> b; int<8> s; bit<16> r; }
struct headers { h_t h; }
struct metadata { bit<8> m; }
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control Ig(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        switch (hdr.h.op) {
            1: { hdr.h.r = (bit<16>)(hdr.h.a |+| hdr.h.b); }
            2: { hdr.h.r = (bit<16>)(hdr.h.a |-| hdr.h.b); }
            3:
            4: { hdr.h.r = (bit<16>)(bit<8>)(hdr.h.s |+| 8s100); }
            5: { hdr.h.r = (bit<16>)(bit<8>)(hdr.h.s >> 2); }
            6: { hdr.h.r = (bit<16>)(int<16>)hdr.h.s; }
            7: { hdr.h.r = hdr.h.a ++ hdr.h.b; }
            8: { hdr.h.r = (bit<16>)(hdr.h.a << hdr.h.b); }
            9: { hdr.h.r = (bit<16>)(bit<8>)(hdr.h.s |-| 8s100); }
            default: { hdr.h.r = 0xffff; }
        }
    }
}
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
