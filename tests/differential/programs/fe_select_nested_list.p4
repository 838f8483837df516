/* A list among the select keys (P4_16 12.6.1: the key may be a tuple, and a list
 * expression nests): `select(x, {hdr.h.b, {hdr.h.c, x}})` with keysets that are lists
 * of constants at the tuple's place, or `default` / `_` for the whole tuple. As p4c's
 * SimplifySelectList the keys are flattened into one list, and each keyset with them.
 * Before, the tuple-valued key was copied into a temporary bmv2 has no form for
 * ("tmp_0: metadata of type tuple<...> is not supported on bmv2"). */
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; bit<8> c; }
struct H { h_t h; }
struct M { }
parser p(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start {
        pk.extract(hdr.h);
        bit<8> x = hdr.h.a;
        transition select(x, {hdr.h.b, {hdr.h.c, x}}) {
            (1, {2, {3, 1}}): exact;
            (2, default): any2;
            (3, _): any3;
            default: accept;
        }
    }
    state exact { hdr.h.a = 0xe1; transition accept; }
    state any2 { hdr.h.a = 0xe2; transition accept; }
    state any3 { hdr.h.a = 0xe3; transition accept; }
}
control ingress(inout H hdr, inout M m, inout standard_metadata_t sm) {
    apply { sm.egress_spec = 1; }
}
control vrfy(inout H hdr, inout M m) { apply { } }
control egress(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control update(inout H hdr, inout M m) { apply { } }
control deparser(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); } }
V1Switch(p(), vrfy(), ingress(), egress(), update(), deparser()) main;
