/* A top-level action with an inout struct parameter (standard_metadata_t), bound in
 * table action lists and in a default action (`my_drop(standard_metadata)`), and
 * called directly: the action acts on the argument itself (copy-in/copy-out of the
 * whole struct, P4_16 spec 6.8), so mark_to_drop drops the packet. */
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; }
struct headers { h_t h; }
struct metadata { }

action my_drop(inout standard_metadata_t smeta) {
    mark_to_drop(smeta);
}

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }

control Ig(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action fwd(bit<9> port) { sm.egress_spec = port; }
    table acl { key = { hdr.h.a : exact; } actions = { fwd; my_drop(sm); } default_action = my_drop(sm); }

    apply {
        acl.apply();
        if (hdr.h.b == 8w0xff) {
            my_drop(sm);
        }
    }
}

control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
