/* STF meter_set_rates on a direct meter: the index is an entry handle (simple_switch_CLI
 * calls bm_mt_set_meter_rates for a direct meter). Entry 0's meter is set to one packet
 * per second with bursts of one packet (two-rate, packet meter): its first packet is
 * GREEN (0) and the ones right after are RED (2). Entry 1's meter is never configured,
 * so every packet is GREEN, as bmv2 leaves an unset meter. The color goes into h.v. */
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> k; bit<8> v; }
struct headers { h_t h; }
struct metadata { bit<8> color; }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control Ig(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    direct_meter<bit<8>>(MeterType.packets) dm;
    action fwd(bit<9> port) {
        dm.read(meta.color);
        sm.egress_spec = port;
    }
    table t {
        key = { hdr.h.k : exact; }
        actions = { fwd; }
        meters = dm;
    }
    apply {
        meta.color = 0xff;
        t.apply();
        hdr.h.v = meta.color;
    }
}
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
