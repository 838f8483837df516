#ifndef FABRICLAB_FORWARDING_P4
#define FABRICLAB_FORWARDING_P4

/* Forwarding by destination LID from SM-installed tables; management frames
 * (PROBE, HELLO) go to the SM as packet-in, packet-out goes where it is told. */
control FabricIngress(inout headers_t hdr,
                      inout metadata_t meta,
                      inout standard_metadata_t standard_metadata) {

    /* Index: port * DROP_REASONS + reason. */
    counter(NUM_PORTS * DROP_REASONS, CounterType.packets_and_bytes) drop_counter;
    counter(NUM_PORTS, CounterType.packets_and_bytes) rx_port_counter;

    action drop_with_reason(bit<32> reason) {
        meta.drop_reason = reason;
        mark_to_drop(standard_metadata);
        drop_counter.count((bit<32>)standard_metadata.ingress_port * DROP_REASONS + reason);
    }

    action forward(port_t port) {
        standard_metadata.egress_spec = port;
    }

    action no_route() {
        drop_with_reason(DROP_NO_ROUTE);
    }

    table dlid_route {
        key = {
            hdr.lrh.dlid: exact;
        }
        actions = {
            forward;
            no_route;
        }
        default_action = no_route();
        size = 49152;
    }

    action punt_to_cpu() {
        standard_metadata.egress_spec = CPU_PORT;
        hdr.packet_in.setValid();
        hdr.packet_in.ingress_port = (bit<16>)standard_metadata.ingress_port;
        hdr.packet_in.reason = (bit<16>)hdr.lrh.kind;
    }

    apply {
        rx_port_counter.count((bit<32>)standard_metadata.ingress_port);
        if (hdr.packet_out.isValid()) {
            standard_metadata.egress_spec = (port_t)hdr.packet_out.egress_port;
            hdr.packet_out.setInvalid();
        } else if (hdr.lrh.isValid()) {
            if (hdr.lrh.kind == KIND_PROBE || hdr.lrh.kind == KIND_HELLO) {
                punt_to_cpu();
            } else {
                dlid_route.apply();
            }
        } else {
            drop_with_reason(DROP_NOT_FABRIC);
        }
    }
}

control FabricEgress(inout headers_t hdr,
                     inout metadata_t meta,
                     inout standard_metadata_t standard_metadata) {
    counter(NUM_PORTS, CounterType.packets_and_bytes) tx_port_counter;

    apply {
        tx_port_counter.count((bit<32>)standard_metadata.egress_port);
    }
}

#endif
