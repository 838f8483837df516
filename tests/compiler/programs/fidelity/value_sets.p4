/* Parser value sets (P4_16 12.11): value_set<bit<16>> in a one-key select, and
 * value_set<pair_t> with a struct type as the one label of a select on two keys (the
 * struct's fields match the keys one for one). The sets start empty: nothing
 * matches them until the control plane adds values (test_fid_b_value_sets). */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> type; }
header tag_t { bit<4> pcp; bit<12> vid; bit<16> type; }
struct headers { ethernet_t eth; tag_t tag; }
struct pair_t { bit<16> type; bit<4> pcp; }
struct metadata { bit<8> path; }

parser P(packet_in pkt, out headers h, inout metadata m, inout standard_metadata_t sm) {
    value_set<pair_t>(4) pairs;
    value_set<bit<16>>(2) types;
    state start {
        pkt.extract(h.eth);
        transition select(h.eth.type) { types: tagged; 0x8100: tagged; default: accept; }
    }
    state tagged {
        pkt.extract(h.tag);
        transition select(h.tag.type, h.tag.pcp) {
            pairs: matched;
            (0x0800, 0): plain;
            default: accept;
        }
    }
    state matched { m.path = 1; transition accept; }
    state plain { m.path = 2; transition accept; }
}
control VC(inout headers h, inout metadata m) { apply { } }
control I(inout headers h, inout metadata m, inout standard_metadata_t sm) {
    apply { sm.egress_spec = 1; h.eth.src[7:0] = m.path; }
}
control E(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout metadata m) { apply { } }
control D(packet_out pkt, in headers h) { apply { pkt.emit(h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
