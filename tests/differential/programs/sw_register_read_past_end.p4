/* register.read() with an index past the end: v1model leaves the value unspecified;
 * simple_switch refuses the read and leaves the destination as it was. */
#include <core.p4>
#include <v1model.p4>
header h_t { bit<32> r; }
struct H { h_t h; }
struct M {}
parser p(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control ingress(inout H h, inout M m, inout standard_metadata_t sm) {
    register<bit<32>>(4) r;
    apply {
        h.h.r = 32w0x12345678;
        r.read(h.h.r, 32w9);
        sm.egress_spec = 1;
    }
}
control egress(inout H h, inout M m, inout standard_metadata_t sm) { apply {} }
control vrfy(inout H h, inout M m) { apply {} }
control upd(inout H h, inout M m) { apply {} }
control dep(packet_out pk, in H h) { apply { pk.emit(h.h); } }
V1Switch(p(), vrfy(), ingress(), egress(), upd(), dep()) main;
