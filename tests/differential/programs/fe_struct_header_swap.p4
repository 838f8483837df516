/* A struct expression assigned to a struct of headers whose components read headers
 * the assignment writes (P4_16 11.1: the right-hand side is evaluated before the
 * assignment): `hdr.pair = {x = hdr.pair.y, y = hdr.pair.x}` swaps the two headers,
 * and `{hdr.pair.y, hdr.pair.y}` copies y to both. Assigned field by field, the swap
 * gave y the header it had just written into x (both ended up the old y); a header
 * component that reads what the assignment writes is first copied into a temporary
 * header, as a bit<W> component already was into a temporary field. */
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
header op_t { bit<8> op; }
struct P { h_t x; h_t y; }
struct H { op_t op; P pair; }
struct M { }
parser p(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start {
        pk.extract(hdr.op);
        pk.extract(hdr.pair.x);
        pk.extract(hdr.pair.y);
        transition accept;
    }
}
control ingress(inout H hdr, inout M m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (hdr.op.op == 1) {
            hdr.pair = {x = hdr.pair.y, y = hdr.pair.x};
        } else {
            hdr.pair = {hdr.pair.y, hdr.pair.y};
        }
    }
}
control vrfy(inout H hdr, inout M m) { apply { } }
control egress(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control update(inout H hdr, inout M m) { apply { } }
control deparser(packet_out pk, in H hdr) { apply { pk.emit(hdr); } }
V1Switch(p(), vrfy(), ingress(), egress(), update(), deparser()) main;
