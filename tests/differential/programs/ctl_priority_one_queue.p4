/* standard_metadata.priority on a switch with one queue per port (simple_switch's
 * default, and the embedded switch's): a priority the switch has no queue for is
 * dropped at the traffic manager ("Priority out of range, dropping packet"). */
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> prio; bit<8> tag; }
struct headers { h_t h; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control Ig(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        sm.priority = (bit<3>)hdr.h.prio;
    }
}
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
