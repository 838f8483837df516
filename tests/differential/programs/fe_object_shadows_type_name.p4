/* A variable, constant, parameter or instance may be named like a type (here
 * v1model's externs `counter`, `register`, `meter`, `direct_counter`): inside its
 * scope the name is the object, as p4c's lexer looks names up in its scoped
 * symbol table (P4_16 6.4, 6.8: a declaration shadows an outer one). Outside
 * that scope the name is the type again. */
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; bit<8> c; bit<8> d; }
struct headers { h_t h; }
struct metadata { }

// a function parameter named `meter`
bit<8> twice(in bit<8> meter) { return meter + meter; }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }

control Ig(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    counter(4, CounterType.packets) hits;      // the type, before any shadowing
    action mark(bit<8> register) {             // an action parameter
        hdr.h.c = register < 8w5 ? register : 8w5;
    }
    apply {
        sm.egress_spec = 1;
        hits.count(0);
        bit<8> counter = hdr.h.a;              // a local variable
        if (counter < 8w3) {
            counter = counter + 8w10;
        }
        hdr.h.b = twice(counter);
        mark(hdr.h.c);
    }
}

control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    counter(4, CounterType.packets) eg_hits;   // `counter` is the type again
    register<bit<8>>(2) direct_counter;        // an instance
    apply {
        eg_hits.count(1);
        direct_counter.write(0, hdr.h.a);
        direct_counter.read(hdr.h.d, 0);
    }
}
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
