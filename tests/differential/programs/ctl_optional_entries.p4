/* `optional` match keys (P4_16 v1model): a const entry gives each key either a
 * value (matched exactly) or `_` (matches anything); earlier entries win. bmv2
 * has no optional match type: the key is a ternary one (value: full mask,
 * `_`: zero mask), the P4Info keeps OPTIONAL. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> type; }
header tag_t { bit<8> kind; bit<8> mark; }
struct headers { ethernet_t eth; tag_t tag; }
struct metadata { }

parser P(packet_in pkt, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.eth); pkt.extract(h.tag); transition accept; }
}
control VC(inout headers h, inout metadata m) { apply { } }
control I(inout headers h, inout metadata m, inout standard_metadata_t sm) {
    action to(bit<9> port, bit<8> mark) { sm.egress_spec = port; h.tag.mark = mark; }
    action drop() { mark_to_drop(sm); }
    table classify {
        key = {
            h.eth.type: optional;
            h.tag.kind: optional @name("kind");
        }
        actions = { to; drop; }
        default_action = drop();
        const entries = {
            (0x0800, 0x01) : to(1, 0x11);
            (_,      0x01) : to(2, 0x21);
            (0x0800, _)    : to(3, 0x31);
            (0x86dd, 0x07) : drop();
            (_,      _)    : to(4, 0x41);
        }
    }
    apply { classify.apply(); }
}
control E(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout metadata m) { apply { } }
control D(packet_out pkt, in headers h) { apply { pkt.emit(h.eth); pkt.emit(h.tag); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
