/* @field_list(N) with N a serializable enum member, as p4c's P4_14-to-P4_16
 * translator writes it (`enum bit<8> FieldLists { ... }`), and the preserving call
 * given the member cast to bit<8>: the annotated field survives the resubmission. */
#include <core.p4>
#include <v1model.p4>

enum bit<8> FieldLists { none = 0, keep_port = 3 }
header h_t { bit<8> a; }
struct headers { h_t h; }
struct metadata { @field_list(FieldLists.keep_port) bit<9> port; }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control Ig(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        if (sm.instance_type == 0) {
            meta.port = (bit<9>)hdr.h.a;
            resubmit_preserving_field_list((bit<8>)FieldLists.keep_port);
        } else {
            sm.egress_spec = meta.port;
        }
    }
}
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
