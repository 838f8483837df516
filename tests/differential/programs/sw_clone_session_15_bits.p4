/* clone()'s session id is its low 15 bits on simple_switch, which keeps it in 16 bits
 * with the top one marking a clone as requested (register_access.h; so that session 0
 * can be used): clone(I2E, 0x10005), clone(I2E, 0x80000005) and clone(I2E, 0x8005) go
 * to session 5, clone(E2E, 0x18006) to session 6. The embedded switch looked the whole
 * value up, found no such session and made no clone. */
#include <core.p4>
#include <v1model.p4>
header h_t { bit<32> sess; bit<32> esess; bit<8> inst; }
struct H { h_t h; }
struct M {}
parser p(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control ingress(inout H h, inout M m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (h.h.sess != 0) { clone(CloneType.I2E, h.h.sess); }
    }
}
control egress(inout H h, inout M m, inout standard_metadata_t sm) {
    apply {
        h.h.inst = (bit<8>) sm.instance_type;
        if (sm.instance_type == 0 && h.h.esess != 0) { clone(CloneType.E2E, h.h.esess); }
    }
}
control vrfy(inout H h, inout M m) { apply {} }
control upd(inout H h, inout M m) { apply {} }
control dep(packet_out pk, in H h) { apply { pk.emit(h.h); } }
V1Switch(p(), vrfy(), ingress(), egress(), upd(), dep()) main;
