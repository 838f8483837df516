/* p4c's front end gives every table without `default_action` an `@defaultonly NoAction`
 * and `default_action = NoAction()`, also a table with an action profile or selector
 * (its bmv2 back end then leaves the JSON default entry out, with a warning). So NoAction
 * is one of the table's actions in the JSON and the P4Info (scope DEFAULT_ONLY): the
 * control plane may make a member of it and set that member as the table's default. */
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> k; bit<8> s; bit<8> o; }
struct headers { h_t h; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }

control Ig(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action set_o(bit<8> v) { hdr.h.o = v; }
    table sel_t {
        key = { hdr.h.k : exact; hdr.h.s : selector; }
        actions = { set_o; }
        implementation = action_selector(HashAlgorithm.identity, 32w16, 32w8);
    }
    table prof_t {
        key = { hdr.h.k : exact; }
        actions = { set_o; }
        implementation = action_profile(32w16);
    }
    apply {
        sm.egress_spec = 1;
        if (hdr.h.k < 8w0x10) {
            sel_t.apply();
        } else {
            prof_t.apply();
        }
    }
}

control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
