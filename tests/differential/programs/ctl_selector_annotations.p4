/* Annotations that configure action profiles in the P4Info (p4c's addActionProfile and
 * getTableImplementationAnnotations): on an inline `implementation = action_selector(...)`
 * the property's annotations are the selector's (@max_group_size -> max_group_size); on a
 * declared selector, its own; @selector_size_semantics("sum_of_members") with
 * @max_member_weight, otherwise sum_of_weights; none of them is a preamble annotation, and
 * an action profile without a selector has no max_group_size. The packets below only show
 * that the selectors still pick members (identity hash over s: member s % group size); the
 * P4Info is compared with p4c's where p4c is installed (test_p4info_diff) and in
 * tests/compiler/test_p4info.py. */
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
    @max_group_size(4) @selector_size_semantics("sum_of_members") @max_member_weight(2)
    action_selector(HashAlgorithm.identity, 32w16, 32w8) declared;
    table inline_t {
        key = { hdr.h.k : exact; hdr.h.s : selector; }
        actions = { set_o; }
        @name("inline_sel") @max_group_size(8)
        implementation = action_selector(HashAlgorithm.identity, 32w16, 32w8);
    }
    table declared_t {
        key = { hdr.h.k : exact; hdr.h.s : selector; }
        actions = { set_o; }
        implementation = declared;
    }
    table prof_t {
        key = { hdr.h.k : exact; }
        actions = { set_o; }
        @max_group_size(8) implementation = action_profile(32w16);
    }
    apply {
        sm.egress_spec = 1;
        if (hdr.h.k == 1) {
            inline_t.apply();
        } else if (hdr.h.k == 2) {
            declared_t.apply();
        } else {
            prof_t.apply();
        }
    }
}

control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
