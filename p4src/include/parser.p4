#ifndef FABRICLAB_PARSER_P4
#define FABRICLAB_PARSER_P4

parser FabricParser(packet_in packet,
                    out headers_t hdr,
                    inout metadata_t meta,
                    inout standard_metadata_t standard_metadata) {
    state start {
        transition select(standard_metadata.ingress_port) {
            CPU_PORT: parse_packet_out;
            HOLD_IN_PORT: parse_hold;
            default: parse_ethernet;
        }
    }
    state parse_packet_out {
        packet.extract(hdr.packet_out);
        transition parse_ethernet;
    }
    state parse_hold {
        /* a held frame back from the hold loop (hold_loop.p4); anything else
         * there is left unparsed, and ingress drops it as not a fabric frame */
        packet.extract(hdr.hold);
        transition select(hdr.hold.magic) {
            HOLD_MAGIC: parse_ethernet;
            default: accept;
        }
    }
    state parse_ethernet {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_FABRIC: parse_lrh;
            ETHERTYPE_MAC_CONTROL: parse_pfc;
            default: accept;
        }
    }
    state parse_pfc {
        packet.extract(hdr.pfc);
        transition accept;
    }
    state parse_lrh {
        packet.extract(hdr.lrh);
        transition select(hdr.lrh.kind) {
            KIND_DATA: parse_bth;
            KIND_CREDIT: parse_credit;
            KIND_PROBE: parse_probe;
            KIND_HELLO: parse_hello;
            KIND_NOTIFY: parse_notify;
            default: accept;
        }
    }
    state parse_bth {
        packet.extract(hdr.bth);
        packet.extract(hdr.app);
        transition accept;
    }
    state parse_credit {
        packet.extract(hdr.credit);
        transition accept;
    }
    state parse_probe {
        packet.extract(hdr.probe);
        transition accept;
    }
    state parse_hello {
        packet.extract(hdr.hello);
        transition accept;
    }
    state parse_notify {
        packet.extract(hdr.notify);
        transition accept;
    }
}

control FabricDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.packet_in);
        packet.emit(hdr.hold);
        packet.emit(hdr.ethernet);
        packet.emit(hdr.pfc);
        packet.emit(hdr.lrh);
        packet.emit(hdr.bth);
        packet.emit(hdr.app);
        packet.emit(hdr.credit);
        packet.emit(hdr.probe);
        packet.emit(hdr.hello);
        packet.emit(hdr.notify);
    }
}

control FabricVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control FabricComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

#endif
