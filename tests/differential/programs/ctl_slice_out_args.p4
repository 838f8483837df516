/* A slice is an l-value (P4_16 6.7): it may be the out argument of an extern method or
 * extern function. p4c passes a temporary and then assigns the slice (SideEffectOrdering),
 * so only the sliced bits change; the rest of the field keeps its value. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> type; }
header data_t { bit<8> v; bit<16> a; bit<16> b; bit<32> c; bit<8> d; }
struct headers { ethernet_t eth; data_t d; }
struct metadata { }

parser P(packet_in pkt, out headers h, inout metadata m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.eth); pkt.extract(h.d); transition accept; }
}
control VC(inout headers h, inout metadata m) { apply { } }
control I(inout headers h, inout metadata m, inout standard_metadata_t sm) {
    register<bit<8>>(4) r;
    meter(4, MeterType.packets) mt;

    action from_register(bit<32> idx) { r.read(h.d.b[11:4], idx); }
    table t {
        key = { h.eth.type : exact; }
        actions = { from_register; NoAction; }
        default_action = NoAction();
    }
    apply {
        sm.egress_spec = 1;
        r.write(0, h.d.v);
        r.write(1, ~h.d.v);
        r.read(h.d.a[15:8], 0);
        hash(h.d.c[23:8], HashAlgorithm.identity, 16w0, { h.eth.src[15:0] }, 32w65536);
        random(h.d.b[15:12], 4w3, 4w3);
        mt.execute_meter(32w0, h.d.d[5:4]);
        t.apply();
    }
}
control E(inout headers h, inout metadata m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers h, inout metadata m) { apply { } }
control D(packet_out pkt, in headers h) { apply { pkt.emit(h.eth); pkt.emit(h.d); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
