/* Control-plane names taken from @name annotations as written (P4_16 18.3.3): a name may
 * hold any character of the string literal, here `#` and non-ASCII (UTF-8) characters,
 * which reach the JSON and P4Info unchanged; an STF names them in double quotes, and a
 * `#` inside quotes does not start a comment (p4c's STF lexer). */
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; }
struct headers { h_t h; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }

control Ig(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    @name("set#b") action set_b(bit<8> v) { hdr.h.b = v; }
    @name("t#1◕‿◕ü")
    table t {
        key = { hdr.h.a : exact @name("key#é"); }
        actions = { set_b; NoAction; }
        default_action = NoAction();
    }
    apply {
        sm.egress_spec = 1;
        t.apply();
    }
}

control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
