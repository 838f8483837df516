/* execute_meter() with an index past the end of the meter array updates no meter and
 * leaves the destination as it was, as simple_switch's execute_meter primitive does
 * ("No meters were updated, and neither was dest field"); the embedded switch wrote 0
 * (GREEN) there. Registers and counters ignore such an index the same way (register
 * reads and writes, counts); an unconfigured meter in range is GREEN. */
#include <core.p4>
#include <v1model.p4>
header h_t { bit<32> idx; bit<8> col; bit<8> col2; bit<16> r; }
struct H { h_t h; }
struct M {}
parser p(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control ingress(inout H h, inout M m, inout standard_metadata_t sm) {
    meter(4, MeterType.packets) mp;
    meter(4, MeterType.bytes) mb;
    register<bit<13>>(4) r13;
    counter(4, CounterType.packets_and_bytes) c;
    apply {
        sm.egress_spec = 1;
        bit<8> col = 8w0x77;
        mp.execute_meter(h.h.idx, col);
        h.h.col = col;
        bit<2> col2 = 2w3;
        mb.execute_meter(h.h.idx, col2);
        h.h.col2 = (bit<8>) col2;
        r13.write(h.h.idx, 13w0x1234);
        bit<13> v = 13w0x1fff;
        r13.read(v, h.h.idx);
        h.h.r = (bit<16>) v;
        c.count(h.h.idx);
    }
}
control egress(inout H h, inout M m, inout standard_metadata_t sm) { apply {} }
control vrfy(inout H h, inout M m) { apply {} }
control upd(inout H h, inout M m) { apply {} }
control dep(packet_out pk, in H h) { apply { pk.emit(h.h); } }
V1Switch(p(), vrfy(), ingress(), egress(), upd(), dep()) main;
