/* Action profile members and selector groups built by an STF, with no default entry
 * on an indirect table, so that the netns harness can write every step over
 * P4Runtime (ActionProfileMember, ActionProfileGroup, entries pointing at them;
 * tests/parity/stf_profiles_p4rt.py) as fabriclab-stf writes them with
 * simple_switch_CLI. A group picks its member by the selector's crc16 hash over
 * s1 ++ s2 modulo the group size, members in ascending bmv2 handle order (creation
 * order on both interfaces). An indirect ternary table takes STF priorities. */
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> k; bit<8> s1; bit<8> s2; bit<8> o; bit<8> p; }
struct headers { h_t h; }
struct metadata { }
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control Ig(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action set_o(bit<8> v) { hdr.h.o = v; }
    action set_op(bit<8> v, bit<9> port) { hdr.h.o = v; sm.egress_spec = port; }
    action mark() { hdr.h.p = 0xee; }
    table prof_t {
        key = { hdr.h.k : exact; }
        actions = { set_o; mark; }
        implementation = action_profile(32w16);
    }
    table sel_t {
        key = { hdr.h.k : exact; hdr.h.s1 : selector; hdr.h.s2 : selector; }
        actions = { set_op; }
        implementation = action_selector(HashAlgorithm.crc16, 32w16, 32w16);
    }
    table tern_t {
        key = { hdr.h.s1 : ternary; }
        actions = { set_o; mark; }
        implementation = action_profile(32w4);
    }
    apply {
        sm.egress_spec = 1;
        if (hdr.h.k < 0x10) { prof_t.apply(); }
        else if (hdr.h.k < 0x30) { sel_t.apply(); }
        else { tern_t.apply(); }
    }
}
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
