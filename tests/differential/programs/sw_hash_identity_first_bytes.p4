/* v1model hash() with HashAlgorithm.identity over more than 8 bytes of input: bmv2's
 * `identity` (src/bm_sim/calculations.cpp) makes its uint64 from the FIRST 8 bytes of
 * the concatenated fields, so { d } with d = 0x0102030405060708090a0b0c gives
 * 0x0102030405060708, and modulo 2^32 0x05060708. The other algorithms over the same
 * odd-length input (12 bytes + 13 bits, packed left-aligned and zero-padded as bmv2's
 * BufBuilder does), with odd base, max and output widths, are here too: both switches
 * agree on them. */
#include <core.p4>
#include <v1model.p4>
header in_t { bit<96> d; bit<13> o; bit<3> pad; }
header out_t {
    bit<32> id12; bit<16> id_odd; bit<16> c16; bit<32> c32; bit<16> cs; bit<16> x16;
    bit<16> c16c; bit<32> c32c; bit<13> w13; bit<3> p; bit<8> b8; bit<16> cs_odd;
    bit<16> x_odd; bit<64> id_w;
}
struct H { in_t i; out_t o; }
struct M {}
parser p(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.i); pk.extract(hdr.o); transition accept; }
}
control ingress(inout H h, inout M m, inout standard_metadata_t sm) {
    apply {
        hash(h.o.id12, HashAlgorithm.identity, 32w0, { h.i.d }, 33w0x100000000);
        hash(h.o.id_odd, HashAlgorithm.identity, 16w0, { h.i.o }, 17w0x10000);
        hash(h.o.c16, HashAlgorithm.crc16, 16w0, { h.i.d, h.i.o }, 17w0x10000);
        hash(h.o.c32, HashAlgorithm.crc32, 32w0, { h.i.d, h.i.o }, 33w0x100000000);
        hash(h.o.cs, HashAlgorithm.csum16, 16w0, { h.i.d, h.i.o }, 17w0x10000);
        hash(h.o.x16, HashAlgorithm.xor16, 16w0, { h.i.d, h.i.o }, 17w0x10000);
        hash(h.o.c16c, HashAlgorithm.crc16_custom, 16w0, { h.i.d, h.i.o }, 17w0x10000);
        hash(h.o.c32c, HashAlgorithm.crc32_custom, 32w0, { h.i.d, h.i.o }, 33w0x100000000);
        hash(h.o.w13, HashAlgorithm.crc32, 13w5, { h.i.d }, 32w7);
        hash(h.o.b8, HashAlgorithm.crc16, 8w250, { h.i.o }, 16w1000);
        hash(h.o.cs_odd, HashAlgorithm.csum16, 16w0, { h.i.d[95:56] }, 17w0x10000);
        hash(h.o.x_odd, HashAlgorithm.xor16, 16w0, { h.i.d[95:56] }, 17w0x10000);
        hash(h.o.id_w, HashAlgorithm.identity, 64w0, { h.i.d[95:40] }, 64w0xffffffffffffffff);
        sm.egress_spec = 1;
    }
}
control egress(inout H h, inout M m, inout standard_metadata_t sm) { apply {} }
control vrfy(inout H h, inout M m) { apply {} }
control upd(inout H h, inout M m) { apply {} }
control dep(packet_out pk, in H h) { apply { pk.emit(h.i); pk.emit(h.o); } }
V1Switch(p(), vrfy(), ingress(), egress(), upd(), dep()) main;
