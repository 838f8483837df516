#ifndef FABRICLAB_FORWARDING_P4
#define FABRICLAB_FORWARDING_P4

/* The ingress pipeline: forwarding by destination LID from SM-installed tables
 * with fast reroute (port_liveness), SL -> class, the receive side of flow control
 * (flow_control.p4: consuming PFC/CREDIT frames, buffer admission, pauses);
 * management frames (PROBE, HELLO, SA) go to the SM as packet-in, packet-out goes
 * where it is told. Every drop is counted here, by port and reason, including
 * the ones egress decides (a held frame comes back with a verdict).
 *
 * The embedded compiler cannot instantiate a control inside another, so the
 * flow-control and reroute steps are sections of this control rather than
 * sub-controls; the flow-control state lives in flow_control.p4. */
control FabricIngress(inout headers_t hdr,
                      inout metadata_t meta,
                      inout standard_metadata_t standard_metadata) {

    /* Index: port * DROP_REASONS + reason. */
    counter(NUM_PORTS * DROP_REASONS, CounterType.packets_and_bytes) drop_counter;
    counter(NUM_PORTS, CounterType.packets_and_bytes) rx_port_counter;

    bit<32> port_base;  /* ingress port * NUM_CLASSES */
    bit<64> now_ns;

    action drop_with_reason(bit<32> reason) {
        meta.drop_reason = reason;
        mark_to_drop(standard_metadata);
        drop_counter.count((bit<32>)standard_metadata.ingress_port * DROP_REASONS + reason);
    }

    /* A held frame that egress gave up on, counted at the port it came in on. */
    action drop_held() {
        meta.drop_reason = meta.verdict - 1;
        mark_to_drop(standard_metadata);
        drop_counter.count((bit<32>)meta.in_port * DROP_REASONS + meta.verdict - 1);
    }

    /* ---------------------------------------------------------------- routing */

    /* One egress port (used unless port_liveness marks it down). */
    action forward(port_t port) {
        meta.route_primary = port;
        meta.route_has_backup = 0;
        meta.routed = 1;
    }

    /* A primary port, and the backup used at once while the primary is down. */
    action forward_frr(port_t primary, port_t backup) {
        meta.route_primary = primary;
        meta.route_backup = backup;
        meta.route_has_backup = 1;
        meta.routed = 1;
    }

    /* LOSSY: the egress port's buffer is full; counted at the egress port. */
    action tail_drop() {
        meta.drop_reason = DROP_TAIL;
        drop_counter.count((bit<32>)standard_metadata.egress_spec * DROP_REASONS + DROP_TAIL);
        mark_to_drop(standard_metadata);
    }

    /* dlid_route's miss: the frame is dropped and counted below (a NOTIFY is not). */
    action no_route() {
        meta.routed = 0;
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

    /* ------------------------------------------------------- run-time config */

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

    /* Per port: one 802.1Qbb pause quantum, 512 bit times at the link's rate
     * (51200 ns at 10 Mb/s). */
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

    /* LOSSY: the most data frames queued towards an egress port (0 = no limit). */
    action set_egress_limit(bit<32> limit) {
        meta.egress_limit = limit;
    }

    table egress_config {
        key = {
            standard_metadata.egress_spec: exact;
        }
        actions = {
            set_egress_limit;
        }
        default_action = set_egress_limit(0);
        size = 512;
    }

    /* Fast reroute. dlid_route gives a primary and (forward_frr) a backup
     * egress port per destination; port_liveness says which ports are down: its
     * default action carries one bit per port. The switch's local agent modifies
     * that default entry over P4Runtime the moment a carrier drops, so every
     * destination using that port moves to its backup with no per-destination
     * update. A table and not a register: bmv2's P4Runtime server does not
     * implement register writes. It is applied on every pass (a held frame
     * recirculates through ingress, so it sees a port go down while it waits)
     * and the mask reaches egress with the packet. 0, the initial default, is
     * every port up, so a switch forwards before anyone has written it. */
    action set_ports_down(port_mask_t down) {
        meta.ports_down = down;
    }

    table port_liveness {
        actions = {
            set_ports_down;
        }
        default_action = set_ports_down(0);
        size = 1;
    }

    /* The hold loop (hold_loop.p4): 1 = held frames wait round the loop
     * (HOLD_OUT_PORT -> HOLD_IN_PORT) instead of recirculating. The SM sets it on
     * bmv2, with clone session HOLD_SESSION; 0 (the default): recirculation. */
    action set_hold_loop(bit<1> on) {
        meta.hold_loop = on;
    }

    table hold_loop_config {
        actions = {
            set_hold_loop;
        }
        default_action = set_hold_loop(0);
        size = 1;
    }

    /* -------------------------------- QoS: per-class transmit queues */

    /* 1: a data frame waits in the traffic-manager queue of its class
     * (standard_metadata.priority = VL), so that the port's transmit scheduler
     * arbitrates between classes: VL arbitration on the embedded switch, strict
     * priority on bmv2. Needs --priority-queues 8; 0 (the default): one queue. */
    action set_tx_queues(bit<1> per_class) {
        meta.class_queues = per_class;
    }

    table tx_queues {
        actions = {
            set_tx_queues;
        }
        default_action = set_tx_queues(0);
        size = 1;
    }

    action queue_by_class() {
        standard_metadata.priority = meta.cls;
    }

    /* ---------------------------------------- QoS: partitions (P_Keys) */

    /* Host-facing ports check the P_Key of every data frame, as an InfiniBand
     * switch's partition enforcement does, from the SM's partitions.conf:
     * pkey_enforce (keyless, like port_liveness) marks the ports; pkey_in / pkey_out
     * hold each such port's P_Key table (partition -> full member?). A frame
     * from a host must name a partition of its port, and may claim full
     * membership (bit 15) only if the port has it; a frame to a host must name a
     * partition of that port, and the sender or the receiver must be a full
     * member. Anything else is dropped and counted as DROP_PKEY at the port it
     * came in on. Ports not marked are not checked (switch-to-switch links). */
    action set_pkey_ports(port_mask_t ports) {
        meta.pkey_ports = ports;
    }

    table pkey_enforce {
        actions = {
            set_pkey_ports;
        }
        default_action = set_pkey_ports(0);
        size = 1;
    }

    action pkey_member(bit<1> full) {
        meta.pkey_hit = 1;
        meta.pkey_full = full;
    }

    action pkey_not_member() {
        meta.pkey_hit = 0;
        meta.pkey_full = 0;
    }

    table pkey_in {
        key = {
            standard_metadata.ingress_port: exact;
            meta.pkey_base: exact;
        }
        actions = {
            pkey_member;
            pkey_not_member;
        }
        default_action = pkey_not_member();
        size = 4096;
    }

    table pkey_out {
        key = {
            standard_metadata.egress_spec: exact;
            meta.pkey_base: exact;
        }
        actions = {
            pkey_member;
            pkey_not_member;
        }
        default_action = pkey_not_member();
        size = 4096;
    }

    /* ------------------------------------- fault notification (notify.p4) */

    /* The SM sets the default action: the ports (bit p = port p) where NOTIFY
     * frames are sent and taken, 0 = off; its route epoch; and the egress queue
     * NOTIFY frames take (standard_metadata.priority), ahead of the data queued on
     * the port, as InfiniBand sends management traffic on VL15: 7 where the
     * switch has 8 priority queues, else 0 (bmv2 drops a priority it has no queue for). */
    action set_notify(port_mask_t ports, bit<16> epoch, bit<3> queue) {
        meta.notify_ports = ports;
        meta.notify_epoch = epoch;
        meta.notify_priority = queue;
    }

    table notify_config {
        actions = {
            set_notify;
        }
        default_action = set_notify(0, 0, 0);
        size = 1;
    }

    /* Tell every neighbour on a notification port (the sender among them) that the
     * frame's DLID is unreachable here: the frame itself becomes a NOTIFY for its
     * DLID, replicated by multicast group NOTIFY_GROUP (the SM's: this switch's
     * switch ports); egress stamps each copy's source MAC and cuts it. */
    action flood_notify() {
        hdr.ethernet.dst_addr = CREDIT_DST_MAC;
        hdr.ethernet.ether_type = ETHERTYPE_FABRIC;
        hdr.bth.setInvalid();
        hdr.app.setInvalid();
        hdr.lrh.vl = 0;
        hdr.lrh.sl = 0;
        hdr.lrh.kind = KIND_NOTIFY;
        hdr.lrh.slid = 0;
        hdr.lrh.pkt_len = 4;
        hdr.notify.setValid();
        hdr.notify.op = NOTIFY_OP_UNREACHABLE;
        hdr.notify.reserved = 0;
        hdr.notify.epoch = meta.notify_epoch;
        standard_metadata.mcast_grp = NOTIFY_GROUP;
        standard_metadata.priority = meta.notify_priority;
    }

    /* ------------------------------------- flow control, receive side */

    /* An 802.1Qbb class: paused for quanta * 512 bit times from now; quanta 0
     * (resume) leaves paused_until = now, i.e. not paused. */
    action pause_class(bit<32> prio, bit<16> quanta) {
        fc_paused_until_ns.write(port_base + prio,
                                 now_ns + (bit<64>)quanta * meta.pause_quantum_ns);
        pause_rx.count(port_base + prio);
    }

    /* A CREDIT frame's FCCL is absolute: a lost one costs nothing once the next
     * arrives. Its FCTBS is not trusted here: where links are shaped after the
     * pipeline (tc on bmv2), a CREDIT frame overtakes the data its sender already
     * let through (topologies/link_rates.py), and ABR := FCTBS would count that
     * data twice and advertise credit the buffer does not have. ABR resyncs on a
     * request instead (answer_credit_request), which keeps its place among the
     * data; and it counts every data frame received, admitted or not
     * (buffer_admit, count_rx). */
    action take_credit(bit<32> index) {
        fc_fccl.write(index, hdr.credit.fccl);
        fc_fccl_known.write(index, 1);
        credit_rx.count(index);
    }

    /* IB's ABR: one more block received on (ingress port, class), for a data frame
     * dropped before admission (no_route, pkey): the sender's FCTBS counted it.
     * buffer_admit counts the others, admitted or overflowing. */
    action count_rx(bit<32> index) {
        bit<12> abr;
        fc_abr.read(abr, index);
        fc_abr.write(index, abr + 1);
    }

    /* The requester's FCTBS counts every block it sent before this frame, which
     * travels among its data (requests stay in the data class where tc shapes the
     * link), so ABR resynchronises to it (IB's FC init): frames the sender counted
     * and we never received (lost on a cut link) cost credit only until the
     * sender, short of it, asks. */
    action answer_credit_request(bit<32> index) {
        fc_abr.write(index, hdr.credit.fctbs);
        meta.fc_op = FC_OP_CREDIT;
        meta.fc_cls = hdr.credit.vl[2:0];
        meta.fc_credit_limit = meta.cfg.credit_limit;
        clone_preserving_field_list(CloneType.I2E,
            FC_SESSION_BASE + (bit<32>)standard_metadata.ingress_port, FL_FC);
    }

    /* ------------------------------------------------- receive-buffer admission
     * The receive buffer of (ingress port, class) and the egress queue counts
     * are updated here by bmv2's ingress thread and by its egress threads
     * (FabricEgress.buffer_release, queue_release): every read-modify-write is
     * one action, because bmv2 locks the register arrays an action uses while
     * the action runs. Split across actions, concurrent updates were lost and
     * the buffer advertised credit it did not have. */
    bit<1> fc_admitted;
    bit<1> fc_pause_due;
    bit<32> fc_occupancy;

    /* LOSSY: one more frame towards out_port, unless its egress limit is reached. */
    action queue_admit(bit<32> out_index) {
        bit<32> queued;
        egress_queued.read(queued, out_index);
        fc_admitted = 1;
        if (meta.egress_limit != 0 && queued >= meta.egress_limit) {
            fc_admitted = 0;
        } else {
            egress_queued.write(out_index, queued + 1);
        }
    }

    /* PFC/CREDIT: one more frame in the buffer, unless it holds `limit` already;
     * PFC: a pause is due at XOFF, once per crossing and again once half the
     * pause time has passed (it would expire). */
    action buffer_admit(bit<32> index, bit<32> limit) {
        bit<32> occupancy;
        fc_buffer.read(occupancy, index);
        fc_admitted = 0;
        fc_pause_due = 0;
        if (meta.cfg.mode == FC_CREDIT) {
            /* ABR with the occupancy, in one action: egress builds FCCL = ABR + free
             * from both, and must never see the frame counted in ABR and not yet
             * in the occupancy (one block of credit too many). */
            bit<12> abr;
            fc_abr.read(abr, index);
            fc_abr.write(index, abr + 1);
        }
        if (occupancy < limit) {
            fc_admitted = 1;
            occupancy = occupancy + 1;
            fc_buffer.write(index, occupancy);
            if (meta.cfg.mode == FC_PFC && occupancy >= meta.cfg.xoff) {
                bit<64> sent_ns;
                fc_pause_sent_ns.read(sent_ns, index);
                if (sent_ns == 0
                        || now_ns > sent_ns + (((bit<64>)PFC_PAUSE_QUANTA * meta.pause_quantum_ns) >> 1)) {
                    fc_pause_sent_ns.write(index, now_ns | 1);
                    fc_pause_due = 1;
                }
            }
        }
        fc_occupancy = occupancy;
    }

    /* fc_pause_sent_ns is written by buffer_admit, in the same action as the
     * occupancy that crossed XOFF. */
    action send_pause() {
        meta.fc_op = FC_OP_PAUSE;
        meta.fc_cls = meta.in_cls;
        clone_preserving_field_list(CloneType.I2E,
            FC_SESSION_BASE + (bit<32>)standard_metadata.ingress_port, FL_FC);
    }

    apply {
        fc_config.apply();
        port_config.apply();
        port_liveness.apply();
        tx_queues.apply();
        pkey_enforce.apply();
        notify_config.apply();
        hold_loop_config.apply();
        if (hdr.hold.isValid() && hdr.hold.magic == HOLD_MAGIC) {
            hold_unpack(hdr, meta);  /* back from the hold loop: as if recirculated */
        }
        port_base = (bit<32>)standard_metadata.ingress_port * NUM_CLASSES;
        now_ns = (bit<64>)standard_metadata.ingress_global_timestamp * 1000;

        if (meta.held == 1) {
            /* A held data frame back from recirculation: straight back to its
             * port, or to the drop counter if egress gave up on it. */
            if (meta.verdict != 0) {
                drop_held();
            } else {
                standard_metadata.egress_spec = meta.out_port;
                if (meta.class_queues == 1) { queue_by_class(); }
                /* ---- fault notification: held for a port a neighbour has since
                 * notified dead for its DLID. Egress discards it like a frame held
                 * for a down port: waiting, it would keep its ingress buffer (and
                 * the sender's credits) from the frames our backup could carry. */
                if (meta.notify_ports != 0 && (bit<32>)hdr.lrh.dlid < NOTIFY_LIDS) {
                    bit<64> held_pruned;
                    notify_pruned.read(held_pruned, (bit<32>)hdr.lrh.dlid);
                    bit<16> out1 = (bit<16>)meta.out_port + 1;
                    if (held_pruned[47:32] == meta.notify_epoch
                            && (held_pruned[15:0] == out1 || held_pruned[31:16] == out1)) {
                        meta.notified_dead = 1;
                    }
                }
            }
        } else if (hdr.packet_out.isValid()) {
            rx_port_counter.count((bit<32>)standard_metadata.ingress_port);
            standard_metadata.egress_spec = (port_t)hdr.packet_out.egress_port;
            hdr.packet_out.setInvalid();
        } else if (hdr.pfc.isValid()) {
            /* 802.1Qbb: consumed, never forwarded; honoured in PFC mode only
             * (egress looks at fc_paused_until_ns only then). */
            rx_port_counter.count((bit<32>)standard_metadata.ingress_port);
            if (hdr.pfc.opcode == PFC_OPCODE) {
                if (hdr.pfc.class_enable[0:0] == 1) { pause_class(0, hdr.pfc.quanta0); }
                if (hdr.pfc.class_enable[1:1] == 1) { pause_class(1, hdr.pfc.quanta1); }
                if (hdr.pfc.class_enable[2:2] == 1) { pause_class(2, hdr.pfc.quanta2); }
                if (hdr.pfc.class_enable[3:3] == 1) { pause_class(3, hdr.pfc.quanta3); }
                if (hdr.pfc.class_enable[4:4] == 1) { pause_class(4, hdr.pfc.quanta4); }
                if (hdr.pfc.class_enable[5:5] == 1) { pause_class(5, hdr.pfc.quanta5); }
                if (hdr.pfc.class_enable[6:6] == 1) { pause_class(6, hdr.pfc.quanta6); }
                if (hdr.pfc.class_enable[7:7] == 1) { pause_class(7, hdr.pfc.quanta7); }
            }
            mark_to_drop(standard_metadata);
        } else if (hdr.lrh.isValid()) {
            rx_port_counter.count((bit<32>)standard_metadata.ingress_port);
            if (hdr.lrh.kind == KIND_PROBE || hdr.lrh.kind == KIND_HELLO
                    || hdr.lrh.kind == KIND_SA) {
                /* Management frames go to the SM, never by DLID. */
                punt_to_cpu();
            } else if (hdr.credit.isValid()) {
                /* InfiniBand flow-control packet: absolute FCCL, consumed. */
                bit<32> index = port_base + (bit<32>)hdr.credit.vl[2:0];
                take_credit(index);
                if (hdr.credit.op == CREDIT_OP_REQUEST && meta.cfg.mode == FC_CREDIT) {
                    answer_credit_request(index);
                }
                mark_to_drop(standard_metadata);
            } else {
                meta.in_cls = hdr.lrh.vl[2:0];
                sl_to_vl.apply();
                if (meta.class_queues == 1) { queue_by_class(); }
                dlid_route.apply();
                /* ---- fault notification: a NOTIFY taken on a notification port,
                 * of our epoch, for a DLID that may have a record. */
                bool notify_taken = false;
                if (hdr.notify.isValid()) {
                    notify_rx.count((bit<32>)standard_metadata.ingress_port);
                    notify_taken = (meta.notify_ports >> standard_metadata.ingress_port)[0:0] == 1
                                   && hdr.notify.epoch == meta.notify_epoch
                                   && (bit<32>)hdr.lrh.dlid < NOTIFY_LIDS;
                }
                if (meta.routed == 1) {
                    /* Fast reroute: the primary unless it is down, else the backup. */
                    bit<1> primary_down = (meta.ports_down >> meta.route_primary)[0:0];
                    bit<1> backup_down = 1;
                    if (meta.route_has_backup == 1) {
                        backup_down = (meta.ports_down >> meta.route_backup)[0:0];
                    }
                    /* ---- fault notification: ports neighbours notified dead for this
                     * DLID in this epoch count as down for it; a NOTIFY adds its port. */
                    bit<16> first = 0;
                    bit<16> second = 0;
                    if (meta.notify_ports != 0 && (bit<32>)hdr.lrh.dlid < NOTIFY_LIDS) {
                        bit<64> pruned;
                        notify_pruned.read(pruned, (bit<32>)hdr.lrh.dlid);
                        if (pruned[47:32] == meta.notify_epoch) {
                            first = pruned[15:0];
                            second = pruned[31:16];
                        }
                    }
                    bit<16> primary1 = (bit<16>)meta.route_primary + 1;
                    bit<16> backup1 = (bit<16>)meta.route_backup + 1;
                    bool had_route = (primary_down == 0 && first != primary1 && second != primary1)
                                     || (backup_down == 0 && first != backup1 && second != backup1);
                    /* Only the route's own ports are recorded: with two slots, a
                     * third neighbour's NOTIFY (fattree:6 aggregations have three
                     * cores) would otherwise evict the primary's record. */
                    bit<16> from = (bit<16>)standard_metadata.ingress_port + 1;
                    bool on_route = from == primary1
                                    || (meta.route_has_backup == 1 && from == backup1);
                    if (notify_taken && on_route) {
                        /* the slot of a port that is not the route's (empty, or
                         * left by the routes of before the SM's last install) */
                        bool first_on_route = first == primary1
                                              || (meta.route_has_backup == 1 && first == backup1);
                        if (first != from && second != from) {
                            if (!first_on_route) {
                                first = from;
                            } else {
                                second = from;
                            }
                            notify_pruned.write((bit<32>)hdr.lrh.dlid,
                                (bit<64>)meta.notify_epoch << 32 | (bit<64>)second << 16
                                | (bit<64>)first);
                        }
                    }
                    if (first == primary1 || second == primary1) {
                        primary_down = 1;
                    }
                    if (first == backup1 || second == backup1) {
                        backup_down = 1;
                    }
                    if (hdr.notify.isValid()) {
                        /* ---- fault notification: consumed; this switch just lost
                         * its last way to the DLID: tell every neighbour in turn. */
                        meta.routed = 0;
                        mark_to_drop(standard_metadata);
                        if (notify_taken && had_route && primary_down == 1 && backup_down == 1) {
                            flood_notify();
                        }
                    } else if (primary_down == 0) {
                        standard_metadata.egress_spec = meta.route_primary;
                    } else if (backup_down == 0) {
                        standard_metadata.egress_spec = meta.route_backup;
                    } else {
                        meta.routed = 0;
                        drop_with_reason(DROP_NO_ROUTE);
                        /* ---- fault notification: no live port left for this DLID:
                         * tell the neighbours (the sender among them). */
                        if (hdr.lrh.kind == KIND_DATA
                                && (meta.notify_ports >> standard_metadata.ingress_port)[0:0] == 1) {
                            flood_notify();
                        }
                    }
                } else if (hdr.notify.isValid()) {
                    mark_to_drop(standard_metadata);  /* a NOTIFY for a DLID we do not route */
                } else {
                    drop_with_reason(DROP_NO_ROUTE);
                }
                if (meta.routed == 1 && hdr.bth.isValid() && meta.pkey_ports != 0) {
                    /* Partition enforcement at host-facing ports (see pkey_enforce). */
                    bit<1> pkey_ok = 1;
                    bit<1> sender_full = hdr.bth.pkey[15:15];
                    meta.pkey_base = hdr.bth.pkey[14:0];
                    if ((meta.pkey_ports >> standard_metadata.ingress_port)[0:0] == 1) {
                        pkey_in.apply();
                        if (meta.pkey_hit == 0 || (sender_full == 1 && meta.pkey_full == 0)) {
                            pkey_ok = 0;
                        }
                    }
                    if (pkey_ok == 1
                            && (meta.pkey_ports >> standard_metadata.egress_spec)[0:0] == 1) {
                        pkey_out.apply();
                        if (meta.pkey_hit == 0 || (sender_full == 0 && meta.pkey_full == 0)) {
                            pkey_ok = 0;
                        }
                    }
                    if (pkey_ok == 0) {
                        meta.routed = 0;
                        drop_with_reason(DROP_PKEY);
                    }
                }
                if (meta.routed == 1 && hdr.lrh.kind == KIND_DATA) {
                    /* Admission into the receive buffer of (ingress port, class). */
                    meta.is_data = 1;
                    meta.in_port = standard_metadata.ingress_port;
                    meta.out_port = standard_metadata.egress_spec;
                    meta.arrival_ts = standard_metadata.ingress_global_timestamp;
                    bit<32> index = port_base + (bit<32>)meta.in_cls;
                    bit<1> admitted = 1;
                    if (meta.cfg.mode == FC_LOSSY) {
                        egress_config.apply();
                        queue_admit((bit<32>)standard_metadata.egress_spec);
                        if (fc_admitted == 0) {
                            admitted = 0;
                            tail_drop();
                        }
                    } else {
                        bit<32> limit = meta.cfg.credit_limit;
                        if (meta.cfg.mode == FC_PFC) {
                            limit = meta.cfg.xoff + meta.cfg.headroom;
                        }
                        buffer_admit(index, limit);
                        if (fc_admitted == 0) {
                            /* PFC: the headroom is used up. CREDIT: the sender
                             * ignored our credit limit. Both overflow the buffer. */
                            admitted = 0;
                            drop_with_reason(DROP_HEADROOM);
                        } else {
                            buffer_in.count(index);
                            bit<32> peak;
                            buffer_peak.read(peak, index);
                            if (fc_occupancy > peak) {
                                buffer_peak.write(index, fc_occupancy);
                                peak_rises.count(index);
                            }
                            if (fc_pause_due == 1) {
                                send_pause();
                            }
                        }
                    }
                    if (admitted == 1) {
                        class_rx.count(index);
                    }
                } else if (hdr.lrh.kind == KIND_DATA && meta.cfg.mode == FC_CREDIT) {
                    count_rx(port_base + (bit<32>)meta.in_cls);  /* dropped before admission */
                }
            }
        } else {
            rx_port_counter.count((bit<32>)standard_metadata.ingress_port);
            drop_with_reason(DROP_NOT_FABRIC);
        }
    }
}

#endif
