/* v1model hash() whose base and max are wider than 64 bits: simple_switch reads both
 * as uint64 (their low 64 bits) and adds in 64 bits, so base 2^64 + 2 is 2 and
 * max 2^64 + 7 is 7 (result = a % 7 + 2), and max 2^70 is 0, which gives base. */
#include <core.p4>
#include <v1model.p4>
header h_t { bit<32> a; bit<32> r; bit<32> z; }
struct H { h_t h; }
struct M {}
parser p(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control ingress(inout H h, inout M m, inout standard_metadata_t sm) {
    apply {
        hash(h.h.r, HashAlgorithm.identity, 72w0x010000000000000002, { h.h.a },
             72w0x010000000000000007);
        hash(h.h.z, HashAlgorithm.identity, 32w5, { h.h.a }, 72w1 << 70);
        sm.egress_spec = 1;
    }
}
control egress(inout H h, inout M m, inout standard_metadata_t sm) { apply {} }
control vrfy(inout H h, inout M m) { apply {} }
control upd(inout H h, inout M m) { apply {} }
control dep(packet_out pk, in H h) { apply { pk.emit(h.h); } }
V1Switch(p(), vrfy(), ingress(), egress(), upd(), dep()) main;
