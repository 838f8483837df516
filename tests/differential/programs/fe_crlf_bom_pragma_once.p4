/* Preprocessing as cpp does it (p4c runs cpp first): this file starts with a
 * UTF-8 byte order mark and has CR LF line ends, so the `\` that continues
 * TWICE's definition is followed by CR LF; its include file says `#pragma once`
 * and is included twice. cpp skips the mark, ends lines at CR LF and reads a
 * `#pragma once` file once. */
#include <core.p4>
#include <v1model.p4>
#include "fe_crlf_bom_pragma_once_inc.p4"
#include "fe_crlf_bom_pragma_once_inc.p4"

#define TWICE(x) \
    ((x) << 1)

struct headers { h_t h; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }

control Ig(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        hdr.h.c = TWICE((bit<16>)hdr.h.a) + 16w0x0100;
    }
}

control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
