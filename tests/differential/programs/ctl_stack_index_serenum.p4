/* A serializable enum as a header stack index (p4c accepts it: its value is the
 * underlying bit<8>), written and read. */
#include <core.p4>
#include <v1model.p4>
header v_t { bit<8> x; }
struct headers { v_t[3] v; }
struct metadata { }
enum bit<8> Idx_t { ZERO = 0, ONE = 1, TWO = 2 }
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.v[0]); pkt.extract(hdr.v[1]); pkt.extract(hdr.v[2]);
                  transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control Ig(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        Idx_t i = (Idx_t)hdr.v[0].x;
        hdr.v[i].x = hdr.v[Idx_t.TWO].x + 8w7;
        sm.egress_spec = 1;
    }
}
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.v); } }
V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
