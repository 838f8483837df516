/* Functions returning a header, a header union (built in a local union, one member
 * set per path) and a header stack (P4_16 10.3). */
#include <core.p4>
#include <v1model.p4>
header ethernet_t { bit<48> dstAddr; bit<48> srcAddr; bit<16> etherType; }
header H { bit<8> x; }
header H2 { bit<16> y; }
header_union U { H h; H2 g; }
H f() { H h; return h; }
U g(in bit<8> v) { U u; if (v == 1) { u.h = { v }; } else if (v == 2) { u.g = { 16w0xabcd }; } return u; }
H[2] s(in bit<8> v) { H[2] st; st[1] = { v }; return st; }
struct headers_t { ethernet_t ethernet; H h1; U u1; H[2] st; }
struct metadata_t { }
parser parserImpl(packet_in packet, out headers_t hdr, inout metadata_t meta, inout standard_metadata_t stdmeta) {
    state start { packet.extract(hdr.ethernet); transition accept; }
}
control ingressImpl(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t stdmeta) {
    apply {
        stdmeta.egress_spec = 1;
        hdr.h1 = f();
        hdr.u1 = g(hdr.ethernet.dstAddr[7:0]);
        hdr.st = s(hdr.ethernet.dstAddr[15:8]);
    }
}
control egressImpl(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t stdmeta) { apply { } }
control verifyChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }
control updateChecksum(inout headers_t hdr, inout metadata_t meta) { apply { } }
control deparserImpl(packet_out packet, in headers_t hdr) { apply { packet.emit(hdr); } }
V1Switch(parserImpl(), verifyChecksum(), ingressImpl(), egressImpl(), updateChecksum(), deparserImpl()) main;
