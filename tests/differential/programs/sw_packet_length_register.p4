/* standard_metadata.packet_length in egress, and the bytes counters count, as
 * simple_switch has them. Egress starts with packet_length set from the packet's length
 * register (simple_switch.cpp, egress_thread), not from what ingress left there: the
 * length the packet came in with, plus the size of each header setValid() (add_header)
 * made valid, less each header setInvalid() (remove_header) made invalid. An egress
 * clone keeps that register (multicast replicas too, checked with fabriclab-stf
 * --switch both; left out here, as the veth harness cannot create groups); an ingress
 * clone starts again from the length the packet came in with. Counters count the packet's
 * ingress length (Packet::get_ingress_length), whatever packet_length holds. Before,
 * the embedded switch carried ingress's packet_length into egress (a write of 100 read
 * 100 there, a setValid() nothing) and counted packet_length's bytes. */
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> sel; bit<8> pl_in; bit<8> pl_eg; bit<8> inst; }
header x_t { bit<16> v; }
struct H { h_t h; x_t x; x_t y; }
struct M {}
parser p(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start {
        pk.extract(hdr.h);
        transition select(hdr.h.sel[7:7]) { 1: px; default: accept; }
    }
    state px { pk.extract(hdr.x); transition accept; }
}
control ingress(inout H h, inout M m, inout standard_metadata_t sm) {
    counter(1, CounterType.packets_and_bytes) cin;
    apply {
        sm.egress_spec = 1;
        if (h.h.sel == 1) { sm.packet_length = 100; cin.count(0); }
        if (h.h.sel == 3) { h.y.setValid(); h.y.v = 0x7777; }
        if (h.h.sel == 0x84) { h.x.setInvalid(); }
        if (h.h.sel == 0x85) { h.x.setValid(); }
        if (h.h.sel == 7) { h.y.setValid(); h.y.setInvalid(); h.y.setValid(); h.y.v = 1; }
        if (h.h.sel == 9) { h.y.setValid(); clone(CloneType.I2E, 6); }
        h.h.pl_in = (bit<8>) sm.packet_length;
    }
}
control egress(inout H h, inout M m, inout standard_metadata_t sm) {
    counter(1, CounterType.packets_and_bytes) ceg;
    apply {
        h.h.pl_eg = (bit<8>) sm.packet_length;
        h.h.inst = (bit<8>) sm.instance_type;
        if (h.h.sel == 6 && sm.instance_type == 0) {
            h.y.setValid();
            sm.packet_length = 3;
            clone(CloneType.E2E, 5);
            ceg.count(0);
        }
    }
}
control vrfy(inout H h, inout M m) { apply {} }
control upd(inout H h, inout M m) { apply {} }
control dep(packet_out pk, in H h) { apply { pk.emit(h.h); pk.emit(h.x); pk.emit(h.y); } }
V1Switch(p(), vrfy(), ingress(), egress(), upd(), dep()) main;
