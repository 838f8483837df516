/* truncate() called more than once on a packet: the smallest length wins, across
 * ingress and egress, as bmv2's Packet::truncate keeps min(length, truncated_length)
 * ("When calling truncate multiple times, the smallest provided length value will be
 * used", include/bm/bm_sim/packet.h). The embedded switch kept the last call's length.
 * A length beyond the packet's leaves it whole. Every length is 14 or more: the
 * differential harness sends the frames on veths, which carry no shorter frame. */
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> sel; bit<8> plen_in; bit<8> plen_eg; bit<8> f; }
struct H { h_t h; }
struct M {}
parser p(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control ingress(inout H h, inout M m, inout standard_metadata_t sm) {
    apply {
        h.h.plen_in = (bit<8>) sm.packet_length;
        sm.egress_spec = 1;
        if (h.h.sel == 1) { truncate(15); truncate(18); }
        if (h.h.sel == 2) { truncate(18); truncate(15); }
        if (h.h.sel == 3) { truncate(19); }
        if (h.h.sel == 4) { truncate(14); }
        if (h.h.sel == 5) { truncate(100); }
    }
}
control egress(inout H h, inout M m, inout standard_metadata_t sm) {
    apply {
        h.h.plen_eg = (bit<8>) sm.packet_length;
        if (h.h.sel == 3) { truncate(16); }
        if (h.h.sel == 4) { truncate(17); }
        if (h.h.sel == 6) { truncate(17); truncate(19); }
    }
}
control vrfy(inout H h, inout M m) { apply {} }
control upd(inout H h, inout M m) { apply {} }
control dep(packet_out pk, in H h) { apply { pk.emit(h.h); } }
V1Switch(p(), vrfy(), ingress(), egress(), upd(), dep()) main;
