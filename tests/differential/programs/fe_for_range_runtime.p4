/* for (T x in lo .. hi) (P4_16 1.2.5) with bounds known only at run time (a header
 * field, a function call): the bounds are evaluated once, before the first iteration;
 * lo > hi runs no iteration; hi = the type's largest value ends the loop. The loop
 * variable is a copy of the current value: the body may change it without changing
 * the iteration (what p4c computes for jafingerhut's loop-var-in-range-modifiable-in-body1). */
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> lo; bit<8> hi; bit<8> sum; bit<8> n; bit<8> cnt; }
struct headers { h_t h; }
struct metadata { }

bit<8> plus_one(in bit<8> x) { return x + 1; }

parser P(packet_in pkt, out headers hdr, inout metadata meta,
         inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control Ig(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        bit<8> sum = 0;
        for (bit<8> i in hdr.h.lo .. hdr.h.hi) { sum = sum + i; }
        hdr.h.sum = sum;
        bit<8> n = 0;
        for (bit<8> i in 1 .. 5) { i = i + 1; n = n + i; }
        hdr.h.n = n;
        bit<8> cnt = 0;
        for (bit<8> k in plus_one(hdr.h.lo) .. 8w3) {
            cnt = cnt + 1;
            if (k == 8w2) { break; }
        }
        hdr.h.cnt = cnt;
        sm.egress_spec = 1;
    }
}
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
