/* p4c-bm2-ss preprocesses every program with -D__TARGET_BMV2__ (backends/bmv2/simple_switch,
 * "for compatibility with the previous compiler"), so `#ifdef __TARGET_BMV2__` branches are
 * compiled for bmv2 (ONOS fabric.p4 clones its INT reports only there). The macro is 1, as
 * cpp defines a bare -D, and a program may #undef it like any other macro. */
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; bit<8> c; }
struct headers { h_t h; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }

control Ig(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
#ifdef __TARGET_BMV2__
        hdr.h.a = 8w0xb2;
#else
        hdr.h.a = 8w0x00;
#endif
#if __TARGET_BMV2__ == 1
        hdr.h.b = 8w1;
#endif
#undef __TARGET_BMV2__
#ifndef __TARGET_BMV2__
        hdr.h.c = 8w0xcc;
#endif
    }
}

control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
