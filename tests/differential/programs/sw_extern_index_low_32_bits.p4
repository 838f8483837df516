/* A register, counter or meter index wider than 32 bits is read as its low 32 bits, as
 * simple_switch's primitives read it (Data::get_uint(), an unsigned int): 2^32 + 1 is
 * index 1 and 2^63 + 2 index 2, while 2^32 + 5 is past the end of an array of 4 and
 * ignored. The embedded switch took the whole value, past the end, and ignored them all. */
#include <core.p4>
#include <v1model.p4>
header h_t { bit<64> idx; bit<16> r; bit<8> col; bit<16> w1; }
struct H { h_t h; }
struct M {}
parser p(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control ingress(inout H h, inout M m, inout standard_metadata_t sm) {
    register<bit<16>>(4) r;
    register<bit<16>>(4) w;
    counter(4, CounterType.packets) c;
    meter(4, MeterType.packets) mt;
    apply {
        sm.egress_spec = 1;
        r.write(1, 16w0x1111);
        r.write(2, 16w0x2222);
        bit<16> v = 16w0xeeee;
        r.read(v, h.h.idx);
        h.h.r = v;
        w.write(h.h.idx, 16w0x3333);
        w.read(h.h.w1, 1);
        c.count(h.h.idx);
        bit<8> col = 8w0x77;
        mt.execute_meter(h.h.idx, col);
        h.h.col = col;
    }
}
control egress(inout H h, inout M m, inout standard_metadata_t sm) { apply {} }
control vrfy(inout H h, inout M m) { apply {} }
control upd(inout H h, inout M m) { apply {} }
control dep(packet_out pk, in H h) { apply { pk.emit(h.h); } }
V1Switch(p(), vrfy(), ingress(), egress(), upd(), dep()) main;
