#ifndef FABRICLAB_FORWARDING_P4
#define FABRICLAB_FORWARDING_P4

/* Forwarding by destination LID from SM-installed tables (with a backup port
 * for fast reroute), SL -> class, flow-control admission; management frames
 * (PROBE, HELLO) go to the SM as packet-in, packet-out goes where it is told. */
control FabricIngress(inout headers_t hdr,
                      inout metadata_t meta,
                      inout standard_metadata_t standard_metadata) {

    /* Index: port * DROP_REASONS + reason. */
    counter(NUM_PORTS * DROP_REASONS, CounterType.packets_and_bytes) drop_counter;
    counter(NUM_PORTS, CounterType.packets_and_bytes) rx_port_counter;

    Reroute() reroute;
    FlowControlReceive() fc_receive;
    FlowControlAdmit() fc_admit;

    action drop_with_reason(bit<32> reason) {
        meta.drop_reason = reason;
        mark_to_drop(standard_metadata);
        drop_counter.count((bit<32>)standard_metadata.ingress_port * DROP_REASONS + reason);
    }

    /* A held frame that egress decided to discard, counted at the port it came in on. */
    action drop_held() {
        meta.drop_reason = meta.verdict - 1;
        mark_to_drop(standard_metadata);
        drop_counter.count((bit<32>)meta.in_port * DROP_REASONS + meta.verdict - 1);
    }

    /* One egress port (used unless it is marked down in port_down). */
    action forward(port_t port) {
        meta.route_primary = port;
        meta.route_has_backup = 0;
        meta.routed = 1;
    }

    /* Primary port, and the backup used at once while the primary is down. */
    action forward_frr(port_t primary, port_t backup) {
        meta.route_primary = primary;
        meta.route_backup = backup;
        meta.route_has_backup = 1;
        meta.routed = 1;
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
            forward_frr;
            no_route;
        }
        default_action = no_route();
        size = 49152;
    }

    /* The flow-control mode and its parameters: the SM sets the default action. */
    action set_fc_mode(bit<8> mode, bit<32> xoff, bit<32> xon, bit<32> headroom,
                       bit<32> credit_limit, bit<32> credit_coalesce,
                       bit<32> hoq_lifetime_us, bit<32> watchdog_detect_us,
                       bit<32> watchdog_restore_us) {
        meta.cfg.mode = mode;
        meta.cfg.xoff = xoff;
        meta.cfg.xon = xon;
        meta.cfg.headroom = headroom;
        meta.cfg.credit_limit = credit_limit;
        meta.cfg.credit_coalesce = credit_coalesce;
        meta.cfg.hoq_lifetime_us = hoq_lifetime_us;
        meta.cfg.watchdog_detect_us = watchdog_detect_us;
        meta.cfg.watchdog_restore_us = watchdog_restore_us;
    }

    table fc_config {
        actions = {
            set_fc_mode;
        }
        default_action = set_fc_mode(FC_LOSSY, 0, 0, 0, 0, 1, 0, 0, 0);
        size = 1;
    }

    /* Per port: the duration of one 802.1Qbb pause quantum, 512 bit times at
     * the link's rate (e.g. 51200 ns at 10 Mb/s). */
    action set_port(bit<32> pause_quantum_ns) {
        meta.pause_quantum_ns = (bit<64>)pause_quantum_ns;
    }

    table port_config {
        key = {
            standard_metadata.ingress_port: exact;
        }
        actions = {
            set_port;
        }
        default_action = set_port(512);  /* 1 Gb/s */
        size = 512;
    }

    /* SL -> VL (credit mode) = PFC priority (PFC mode): one class in both. */
    action set_vl(bit<4> vl) {
        hdr.lrh.vl = vl;
        meta.cls = vl[2:0];
    }

    table sl_to_vl {
        key = {
            hdr.lrh.sl: exact;
        }
        actions = {
            set_vl;
        }
        default_action = set_vl(0);
        size = 16;
    }

    action punt_to_cpu() {
        standard_metadata.egress_spec = CPU_PORT;
        hdr.packet_in.setValid();
        hdr.packet_in.ingress_port = (bit<16>)standard_metadata.ingress_port;
        hdr.packet_in.reason = (bit<16>)hdr.lrh.kind;
    }

    apply {
        fc_config.apply();
        if (meta.held == 1) {
            /* A held data frame back from recirculation: straight to its port,
             * or to the drop counter if egress gave up on it. */
            if (meta.verdict != 0) {
                drop_held();
            } else {
                standard_metadata.egress_spec = meta.out_port;
            }
        } else {
            rx_port_counter.count((bit<32>)standard_metadata.ingress_port);
            port_config.apply();
            if (hdr.packet_out.isValid()) {
                standard_metadata.egress_spec = (port_t)hdr.packet_out.egress_port;
                hdr.packet_out.setInvalid();
            } else if (hdr.pfc.isValid()) {
                fc_receive.apply(hdr, meta, standard_metadata);
            } else if (hdr.lrh.isValid()) {
                if (hdr.lrh.kind == KIND_PROBE || hdr.lrh.kind == KIND_HELLO) {
                    punt_to_cpu();
                } else if (hdr.lrh.kind == KIND_CREDIT) {
                    fc_receive.apply(hdr, meta, standard_metadata);
                } else {
                    meta.in_cls = hdr.lrh.vl[2:0];
                    sl_to_vl.apply();
                    dlid_route.apply();
                    if (meta.routed == 1) {
                        reroute.apply(meta, standard_metadata);
                        if (meta.routed == 0) {
                            no_route();
                        } else if (hdr.lrh.kind == KIND_DATA) {
                            fc_admit.apply(hdr, meta, standard_metadata);
                            if (meta.drop == 1) {
                                drop_with_reason(meta.drop_reason);
                            }
                        }
                    }
                }
            } else {
                drop_with_reason(DROP_NOT_FABRIC);
            }
        }
    }
}

control FabricEgress(inout headers_t hdr,
                     inout metadata_t meta,
                     inout standard_metadata_t standard_metadata) {
    counter(NUM_PORTS, CounterType.packets_and_bytes) tx_port_counter;

    FlowControlFrame() fc_frame;
    FlowControlGate() fc_gate;

    apply {
        bool is_clone = standard_metadata.instance_type == INSTANCE_INGRESS_CLONE
                        || standard_metadata.instance_type == INSTANCE_EGRESS_CLONE;
        if (is_clone && meta.fc_op != FC_OP_NONE) {
            fc_frame.apply(hdr, meta, standard_metadata);
        } else if (meta.is_data == 1) {
            if (meta.cfg.mode == FC_LOSSY) {
                meta.held = 0;
                class_tx.count((bit<32>)standard_metadata.egress_port * NUM_CLASSES
                               + (bit<32>)meta.cls);
            } else {
                fc_gate.apply(hdr, meta, standard_metadata);
            }
        }
        if (meta.held == 0) {
            tx_port_counter.count((bit<32>)standard_metadata.egress_port);
        }
    }
}

#endif
