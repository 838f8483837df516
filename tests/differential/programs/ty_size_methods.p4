/* minSizeInBits/minSizeInBytes/maxSizeInBits/maxSizeInBytes (P4_16 8.18): compile-time
 * constants of a header (a varbit field counts 0 for min, its maximum for max), a
 * header union (smallest / largest member), a struct and a header stack (sums). */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> type; }
header opt_t { bit<8> len; varbit<24> data; }
header small_t { bit<4> a; bit<4> b; }
header_union u_t { small_t s; ethernet_t e; }
header out_t { bit<8> eth_bits_lo; bit<8> eth_bytes; bit<8> opt_min; bit<8> opt_max;
               bit<8> opt_max_bytes; bit<8> u_min; bit<8> u_max_bytes; bit<8> stack_bytes; }
struct headers { ethernet_t eth; out_t o; }
struct metadata { }

parser P(packet_in pkt, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.eth); transition accept; }
}
control VC(inout headers h, inout metadata m) { apply { } }
control I(inout headers h, inout metadata m, inout standard_metadata_t sm) {
    opt_t opt;
    u_t u;
    small_t[3] st;
    apply {
        sm.egress_spec = 1;
        h.o.setValid();
        h.o.eth_bits_lo = (bit<8>) h.eth.minSizeInBits();      // 112
        h.o.eth_bytes = (bit<8>) h.eth.minSizeInBytes();        // 14
        h.o.opt_min = (bit<8>) opt.minSizeInBits();             // 8
        h.o.opt_max = (bit<8>) opt.maxSizeInBits();             // 32
        h.o.opt_max_bytes = (bit<8>) opt.maxSizeInBytes();      // 4
        h.o.u_min = (bit<8>) u.minSizeInBits();                 // 8
        h.o.u_max_bytes = (bit<8>) u.maxSizeInBytes();          // 14
        h.o.stack_bytes = (bit<8>) st.minSizeInBytes();         // 3
    }
}
control E(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout metadata m) { apply { } }
control D(packet_out pkt, in headers h) { apply { pkt.emit(h.eth); pkt.emit(h.o); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
