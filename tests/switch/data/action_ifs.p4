/* An action whose body branches (nested if/else on a register it reads and writes),
 * called from the apply block with a run-time argument: compiled into one action with
 * _jump_if_zero/_jump, as fabric.p4's buffer_admit and buffer_release are. */
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> op; bit<8> arg; bit<8> res; }
struct headers_t { h_t h; }
struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers_t hdr, inout meta_t m) { apply { } }

control I(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    register<bit<8>, bit<32>>(4) level;
    bit<8> result;

    /* op 1: add arg unless that passes 10 (then result 0xEE); op 2: take arg away,
     * not below 0; anything else: result = level. */
    action step(bit<32> idx, bit<8> op, bit<8> arg) {
        bit<8> v;
        level.read(v, idx);
        if (op == 1) {
            if (v + arg > 10) {
                result = 0xEE;
            } else {
                v = v + arg;
                result = v;
            }
        } else if (op == 2) {
            if (v > arg) {
                v = v - arg;
            } else {
                v = 0;
            }
            result = v;
        } else {
            result = v;
        }
        level.write(idx, v);
    }

    apply {
        step((bit<32>)sm.ingress_port, hdr.h.op, hdr.h.arg);
        hdr.h.res = result;
        sm.egress_spec = 1;
    }
}
control E(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
