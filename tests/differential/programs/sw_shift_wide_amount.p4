/* Shifts by a run-time amount. bmv2 reads the amount as a 32-bit unsigned int
 * (Data::shift_left/shift_right): a bit<64> amount of 2**40 shifts by 0, 2**40 + 1
 * by 1, and 0xffffffff clears the value. Amounts of the operand's width or more give
 * 0 (an int<8> >> gives its sign). */
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> op; bit<8> a; bit<8> b; bit<8> r; bit<64> w; }
struct H { h_t h; }
struct M {}
parser p(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control ingress(inout H hdr, inout M m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (hdr.h.op == 1) { hdr.h.r = hdr.h.a << hdr.h.b; }
        else if (hdr.h.op == 2) { hdr.h.r = (bit<8>)((int<8>)hdr.h.a >> hdr.h.b); }
        else if (hdr.h.op == 3) { hdr.h.w = hdr.h.w << hdr.h.b; }
        else if (hdr.h.op == 4) { hdr.h.w = hdr.h.w >> hdr.h.b; }
        else if (hdr.h.op == 5) { hdr.h.r = hdr.h.a >> hdr.h.w; }
        else if (hdr.h.op == 6) { hdr.h.r = hdr.h.a << hdr.h.w; }
    }
}
control egress(inout H hdr, inout M m, inout standard_metadata_t sm) { apply {} }
control vrfy(inout H hdr, inout M m) { apply {} }
control upd(inout H hdr, inout M m) { apply {} }
control dep(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); } }
V1Switch(p(), vrfy(), ingress(), egress(), upd(), dep()) main;
