// minSizeInBits()/minSizeInBytes() on a header type name as on a header: compile-time constants
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> f; }
struct headers { h_t h; }
struct meta_t { }
const bit<8> T = 3;
parser P(packet_in pkt, out headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers hdr, inout meta_t m) { apply { } }
control I(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    apply { bit<8> H = hdr.h.f; hdr.h.f = (bit<8>)h_t.minSizeInBits() + (bit<8>)hdr.h.minSizeInBytes(); sm.egress_spec = 1; }
}
control E(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
