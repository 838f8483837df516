/* truncate() before a recirculation or a resubmission: simple_switch truncates a packet
 * only when it transmits it (Packet::truncate: "enforced when calling get_data_size()"),
 * so the recirculated packet is the whole deparsed packet (its packet_length 20 here)
 * and its new pass, like a resubmitted one, starts without the truncation; both leave
 * whole. The embedded switch recirculated the truncated packet (15 bytes). */
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> sel; bit<8> cnt; bit<8> plen; bit<8> inst_in; }
struct H { h_t h; }
struct M {}
parser p(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control ingress(inout H h, inout M m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = (bit<9>) h.h.sel;  // a port per case: bmv2 may reorder them
        h.h.inst_in = (bit<8>) sm.instance_type;
        h.h.plen = (bit<8>) sm.packet_length;
        if (h.h.sel == 2 && sm.instance_type == 0) { truncate(15); resubmit_preserving_field_list(0); }
    }
}
control egress(inout H h, inout M m, inout standard_metadata_t sm) {
    apply {
        h.h.cnt = h.h.cnt + 1;
        if (h.h.sel == 1 && h.h.cnt == 1) { truncate(15); recirculate_preserving_field_list(0); }
    }
}
control vrfy(inout H h, inout M m) { apply {} }
control upd(inout H h, inout M m) { apply {} }
control dep(packet_out pk, in H h) { apply { pk.emit(h.h); } }
V1Switch(p(), vrfy(), ingress(), egress(), upd(), dep()) main;
