/* list<T> (P4_16 1.2.4): a local of list type initialised with a list expression, a list
 * expression cast to list<T>, and for-in over both (1.2.5). The elements of a list are
 * evaluated when the list value is made (before the first iteration), so a body that
 * changes a variable an element read, or the loop variable itself, does not change the
 * values iterated over. */
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; bit<8> c; bit<8> d; }
struct headers { h_t h; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta,
         inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control Ig(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        list<bit<8>> weights = {1, hdr.h.a, 3};
        hdr.h.a = 8w100;
        bit<8> sum = 0;
        for (bit<8> w in weights) { sum = sum + w; }
        hdr.h.b = sum;
        bit<8> m = hdr.h.c;
        bit<8> n = 0;
        for (bit<8> x in (list<bit<8>>) {m, m, 8w2}) {
            m = m + 8w0x10;
            x = x + 1;
            n = n + x;
        }
        hdr.h.c = n;
        hdr.h.d = m;
        sm.egress_spec = 2;
    }
}
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
