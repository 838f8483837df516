/* v1model hash() with max = 0 writes base ("if max = 0, the value written to
 * result will always be base"), as simple_switch does. */
#include <core.p4>
#include <v1model.p4>
header h_t { bit<32> a; bit<32> r; }
struct H { h_t h; }
struct M {}
parser p(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control ingress(inout H h, inout M m, inout standard_metadata_t sm) {
    apply {
        hash(h.h.r, HashAlgorithm.crc32, 32w3, { h.h.a }, 32w0);
        sm.egress_spec = 1;
    }
}
control egress(inout H h, inout M m, inout standard_metadata_t sm) { apply {} }
control vrfy(inout H h, inout M m) { apply {} }
control upd(inout H h, inout M m) { apply {} }
control dep(packet_out pk, in H h) { apply { pk.emit(h.h); } }
V1Switch(p(), vrfy(), ingress(), egress(), upd(), dep()) main;
