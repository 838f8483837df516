/* A meter of bytes meters the packet's ingress length, as simple_switch's
 * (Meter::execute: pkt.get_ingress_length()), not standard_metadata.packet_length,
 * which the program may write. Out of the differential corpus, which cannot set meter
 * rates over P4Runtime (checked with fabriclab-stf --switch bmv2). */
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> sel; bit<8> col; bit<16> pad; }
struct H { h_t h; }
struct M {}
parser p(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control ingress(inout H h, inout M m, inout standard_metadata_t sm) {
    meter(1, MeterType.bytes) mb;
    apply {
        sm.egress_spec = 1;
        if (h.h.sel == 1) { sm.packet_length = 100; }
        mb.execute_meter(0, h.h.col);
    }
}
control egress(inout H h, inout M m, inout standard_metadata_t sm) { apply {} }
control vrfy(inout H h, inout M m) { apply {} }
control upd(inout H h, inout M m) { apply {} }
control dep(packet_out pk, in H h) { apply { pk.emit(h.h); } }
V1Switch(p(), vrfy(), ingress(), egress(), upd(), dep()) main;
