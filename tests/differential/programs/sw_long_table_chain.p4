/* An apply block that the compiler lays out as a long chain of hidden tables (a loop of
 * 200 iterations unrolled, each iteration's statement a table of its own): simple_switch
 * runs it; the embedded switch's code generator inlined node after node and stopped at
 * Python's recursion limit ("internal error: RecursionError"). */
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> step; bit<16> n; bit<8> last; }
struct headers { h_t h; }
struct meta_t { }
parser P(packet_in pkt, out headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control Ing(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    apply {
        for (bit<8> i = 0; i < 200; i = i + 1) {
            hdr.h.n = hdr.h.n + (bit<16>)hdr.h.step;
            hdr.h.last = i;
        }
        sm.egress_spec = 1;
    }
}
control Eg(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control VC(inout headers hdr, inout meta_t m) { apply { } }
control CC(inout headers hdr, inout meta_t m) { apply { } }
control Dep(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), Dep()) main;
