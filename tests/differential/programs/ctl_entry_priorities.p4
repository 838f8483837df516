/* Entry priorities (P4_16 14.2.1.4): `priority = N:` on some entries, the others
 * numbered from the previous by priority_delta; largest_priority_wins = false makes
 * the smallest win; by default the largest wins. Without priorities the first entry
 * that matches wins. */
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> e; bit<16> t; bit<8> o; }
struct headers { h_t h; }
struct metadata { }
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control Ig(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action a() { hdr.h.o = 0xff; }
    action a_params(bit<8> p) { hdr.h.o = p; }
    table t1 {
        key = { hdr.h.e : exact; hdr.h.t : ternary; }
        actions = { a; a_params; }
        default_action = a;
        largest_priority_wins = false;
        priority_delta = 10;
        entries = {
            const priority=10: (0x01, 0x1111 &&& 0xF) : a_params(1);
                               (0x01, 0x1181) : a_params(2);
            priority=5:        (0x01, 0x1000 &&& 0xF000) : a_params(3);
                               (0x02, _) : a_params(4);
        }
    }
    table t2 {
        key = { hdr.h.t : ternary; }
        actions = { a_params; }
        entries = {
            (0x1100 &&& 0xff00) : a_params(0x21);
            (0x1181 &&& 0xffff) : a_params(0x22);
        }
    }
    table t5 {
        key = { hdr.h.e : exact; hdr.h.t : ternary; }
        actions = { a_params; }
        priority_delta = 100;
        entries = {
            priority=1000: (0x04, 0x1111 &&& 0xF) : a_params(0x51);
                           (0x04, 0x1181) : a_params(0x52);
                           (0x04, 0x1000 &&& 0xF000) : a_params(0x53);
            priority=901:  (0x04, 0x0002 &&& 0x000F) : a_params(0x54);
        }
    }
    apply {
        sm.egress_spec = 1;
        t1.apply();
        if (hdr.h.e == 3) { t2.apply(); }
        if (hdr.h.e == 4) { t5.apply(); }
    }
}
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
