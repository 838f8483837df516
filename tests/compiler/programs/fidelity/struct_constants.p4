/* Constants of struct and tuple types (P4_16 10.1): a const whose initializer is a
 * struct or list expression of constants; members and elements read from it fold to
 * the constants. */
#include <core.p4>
#include <v1model.p4>
header ethernet_t { bit<48> dst; bit<48> src; bit<16> type; }
struct limits_t { bit<8> lo; bit<8> hi; }
struct cfg_t { limits_t lim; bit<16> etype; bool on; }
const cfg_t CFG = { { 8w2, 8w9 }, 16w0x0800, true };
const tuple<bit<8>, bit<16>> PAIR = { 8w0x11, 16w0x2233 };
struct headers { ethernet_t eth; }
struct metadata { }
parser P(packet_in pkt, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.eth); transition accept; }
}
control VC(inout headers h, inout metadata m) { apply { } }
control I(inout headers h, inout metadata m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        bit<8> v = h.eth.dst[7:0];
        if (CFG.on && v >= CFG.lim.lo && v <= CFG.lim.hi && h.eth.type == CFG.etype) {
            h.eth.src[7:0] = PAIR[0];
        }
        h.eth.src[31:16] = PAIR[1];
        limits_t l = CFG.lim;
        h.eth.src[15:8] = l.hi;
    }
}
control E(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout metadata m) { apply { } }
control D(packet_out pkt, in headers h) { apply { pkt.emit(h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
