/* truncate(0): simple_switch sends an empty packet (in pcap-file mode, checked with
 * `fabriclab-stf --switch bmv2`); out of the differential corpus, which sends frames on
 * veths, where an empty frame cannot go. A later, larger length does not undo it. */
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> sel; }
struct H { h_t h; }
struct M {}
parser p(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control ingress(inout H h, inout M m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (h.h.sel == 1) { truncate(0); }
    }
}
control egress(inout H h, inout M m, inout standard_metadata_t sm) {
    apply { if (h.h.sel == 1) { truncate(4); } }
}
control vrfy(inout H h, inout M m) { apply {} }
control upd(inout H h, inout M m) { apply {} }
control dep(packet_out pk, in H h) { apply { pk.emit(h.h); } }
V1Switch(p(), vrfy(), ingress(), egress(), upd(), dep()) main;
