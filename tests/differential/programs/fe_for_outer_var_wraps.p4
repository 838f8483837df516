/* A for loop whose variable is declared before the loop (P4_16 1.2.5: the initialiser
 * may be an assignment): the updates wrap around at the variable's own width, so
 * bit<3> i stepping by 3 from 0 runs for 0, 3, 6, 1, 4 and stops at 7 (p4c's
 * loop-3-clause-tricky2); a bit<8> one counts as usual. */
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> n; bit<8> last; bit<8> m; }
struct headers { h_t h; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta,
         inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control Ig(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    bit<3> i;
    apply {
        for (i = 0; i < 7; i = i + 3) {
            hdr.h.n = hdr.h.n + (bit<8>) i;
        }
        hdr.h.last = (bit<8>) i;
        bit<8> j;
        for (j = 250; j > 3; j = j + 3) {
            hdr.h.m = hdr.h.m + 1;
        }
        sm.egress_spec = 1;
    }
}
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
