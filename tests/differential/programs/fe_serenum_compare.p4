/* A serializable enum compared with a value of its underlying type (P4_16 8.3 and 8.11.2:
 * the enum value converts implicitly to the underlying type), with the enum on either side
 * of == and !=, as p4c accepts `hdr.vlan.ether_type == hdr.eth.etherType`. */
#include <core.p4>
#include <v1model.p4>

enum bit<16> ether_type_t {
    TPID = 0x8100,
    IPV4 = 0x0800
}

header h_t { ether_type_t t; bit<16> u; bit<8> r1; bit<8> r2; }
struct headers { h_t h; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }

control Ig(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (hdr.h.t == hdr.h.u) {
            hdr.h.r1 = 1;
        } else {
            hdr.h.r1 = 2;
        }
        if (hdr.h.u != hdr.h.t) {
            hdr.h.r2 = 3;
        } else {
            hdr.h.r2 = 4;
        }
    }
}

control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
