#ifndef FABRICLAB_FLOW_CONTROL_P4
#define FABRICLAB_FLOW_CONTROL_P4

/* Link-level flow control: LOSSY, PFC (802.1Qbb) and CREDIT (InfiniBand).
 *
 * Receive side, per (ingress port, class as received): buffer occupancy, +1
 * when a data frame is admitted at ingress, -1 when it leaves egress (sent or
 * discarded). PFC pauses the upstream at XOFF and resumes it at XON; CREDIT
 * advertises FCCL = ABR + free blocks as the buffer drains.
 *
 * Transmit side, per (egress port, class): a frame may leave only when the
 * class is not paused (PFC) or has credit (CREDIT). bmv2 cannot stop a queue,
 * so a frame that may not leave is held by recirculating it; tickets keep the
 * queue in FIFO order (only the head ticket may go).
 *
 * Flow-control frames are built in egress from clones (I2E at ingress, E2E at
 * egress) sent to clone session FC_SESSION_BASE + port; they are never held
 * and never counted as data. Registers shared by ingress and egress are
 * declared here, at the top level; every array is indexed port * NUM_CLASSES
 * + class. One credit block is one packet in this emulation. */

#define FC_ARRAY (NUM_PORTS * NUM_CLASSES)

/* ---- receive side: (ingress port, class) */
/* LOSSY: data frames admitted towards each egress port and not yet sent. The
 * most it may hold is FabricIngress.egress_config's limit for that port (0 = no
 * limit; the SM sets the link's buffer, as a table entry: bmv2's P4Runtime
 * server cannot write registers). Beyond it frames are tail-dropped here, where
 * the drop is counted (DROP_TAIL), and not in the traffic manager, where no P4
 * counter would see it. */
register<bit<32>, bit<32>>(NUM_PORTS) egress_queued;

register<bit<32>, bit<32>>(FC_ARRAY) fc_buffer;          /* packets held for this input */
register<bit<64>, bit<32>>(FC_ARRAY) fc_pause_sent_ns;   /* last pause sent; 0 = resumed */
register<bit<12>, bit<32>>(FC_ARRAY) fc_abr;             /* adjusted blocks received */
register<bit<32>, bit<32>>(FC_ARRAY) fc_credit_pending;  /* blocks freed, not advertised */

/* ---- transmit side: (egress port, class) */
register<bit<64>, bit<32>>(FC_ARRAY) fc_paused_until_ns; /* from received 802.1Qbb */
register<bit<12>, bit<32>>(FC_ARRAY) fc_fctbs;           /* total blocks sent */
register<bit<12>, bit<32>>(FC_ARRAY) fc_fccl;            /* last credit limit received */
register<bit<1>,  bit<32>>(FC_ARRAY) fc_fccl_known;      /* a CREDIT frame arrived */
register<bit<64>, bit<32>>(FC_ARRAY) fc_credit_req_ns;   /* last credit request sent */
register<bit<32>, bit<32>>(FC_ARRAY) fc_queue_head;      /* ticket allowed to go next */
register<bit<32>, bit<32>>(FC_ARRAY) fc_queue_tail;      /* next ticket to hand out */
register<bit<64>, bit<32>>(FC_ARRAY) fc_head_seen_ns;     /* the head ticket last seen */
register<bit<32>, bit<32>>(FC_ARRAY) fc_head_missed;      /* other holders' passes since */
register<bit<64>, bit<32>>(FC_ARRAY) fc_wd_since_ns;     /* head paused since (watchdog) */
register<bit<64>, bit<32>>(FC_ARRAY) fc_wd_until_ns;     /* watchdog drops until */
/* The link pacer (FabricEgress.egress_pace): when the link's virtual queue of the
 * frames this gate let through drains, per egress port. */
register<bit<64>, bit<32>>(NUM_PORTS) pace_drained_ns;

/* The egress pipeline, almost all of it flow control: it turns clones into
 * flow-control frames, and decides whether a data frame leaves now, waits
 * (recirculates, keeping its ticket) or is discarded (HoQ lifetime, PFC
 * watchdog); a frame that leaves frees its receive buffer, which may send a
 * resume (PFC) or return credits (CREDIT) to the port it came in on. */
control FabricEgress(inout headers_t hdr,
                     inout metadata_t meta,
                     inout standard_metadata_t standard_metadata) {
    counter(NUM_PORTS, CounterType.packets_and_bytes) tx_port_counter;

    bit<32> index;        /* (egress port, class) */
    bit<32> in_index;     /* (ingress port, class as received) */
    bit<64> now_ns;

    action fc_clone(bit<8> op, bit<3> cls, bit<32> session) {
        meta.fc_op = op;
        meta.fc_cls = cls;
        meta.fc_credit_limit = meta.cfg.credit_limit;
        meta.egress_cloned = 1;
        clone_preserving_field_list(CloneType.E2E, session, FL_FC);
    }

    /* The receive buffer and the egress queue counts are shared with bmv2's
     * ingress thread and its other egress threads: each read-modify-write is one
     * action, which bmv2 runs with the action's register arrays locked (see
     * FabricIngress.buffer_admit). */
    bit<1> fc_signal_due;   /* buffer_release: a resume (PFC) or credit (CREDIT) is due */
    bit<1> fc_released;     /* buffer_release: the buffer held the frame */

    action queue_release(bit<32> port) {
        bit<32> queued;
        egress_queued.read(queued, port);
        if (queued > 0) {
            egress_queued.write(port, queued - 1);
        }
    }

    /* The frame leaves the receive buffer of (ingress port, class) `idx`. */
    action buffer_release(bit<32> idx) {
        bit<32> occupancy;
        fc_buffer.read(occupancy, idx);
        fc_released = 0;
        fc_signal_due = 0;
        if (occupancy > 0) {
            occupancy = occupancy - 1;
            fc_released = 1;
        }
        fc_buffer.write(idx, occupancy);
        if (meta.cfg.mode == FC_PFC) {
            bit<64> pause_sent;
            fc_pause_sent_ns.read(pause_sent, idx);
            if (pause_sent != 0 && occupancy <= meta.cfg.xon) {
                fc_pause_sent_ns.write(idx, 0);
                fc_signal_due = 1;
            }
        } else if (meta.cfg.mode == FC_CREDIT) {
            bit<32> pending;
            fc_credit_pending.read(pending, idx);
            pending = pending + 1;
            if (pending >= meta.cfg.credit_coalesce || occupancy == 0) {
                pending = 0;
                fc_signal_due = 1;
            }
            fc_credit_pending.write(idx, pending);
        }
    }

    /* The link pacer, for a target that shapes its links after the pipeline (tc on
     * p4ref's bmv2, no Thrift: topologies/link_rates.py). There the backlog of the
     * frames this gate let through waits in the qdisc, unseen, and a pause comes
     * too late for all of it. With the pacer a frame may leave only while the
     * link's virtual queue (drained at the link's rate, one frame time per frame
     * sent) is shorter than bound_ns; otherwise it is held as if paused. The SM
     * sets it per egress port (table action data: bmv2's P4Runtime server cannot
     * write registers); frame_ns 0, the default and the embedded switch, is no
     * pacer. */
    bit<32> pace_frame_ns;
    bit<32> pace_bound_ns;
    bit<1>  pace_ok;

    action set_pace(bit<32> frame_ns, bit<32> bound_ns) {
        pace_frame_ns = frame_ns;
        pace_bound_ns = bound_ns;
    }

    table egress_pace {
        key = {
            standard_metadata.egress_port: exact;
        }
        actions = {
            set_pace;
        }
        default_action = set_pace(0, 0);
        size = 512;
    }

    /* One action: check the virtual queue and, if the frame may go, add it. */
    action pace_admit(bit<32> port) {
        bit<64> drained;
        pace_drained_ns.read(drained, port);
        if (drained < now_ns) {
            drained = now_ns;
        }
        pace_ok = 0;
        if (drained - now_ns < (bit<64>)pace_bound_ns) {
            pace_ok = 1;
            pace_drained_ns.write(port, drained + (bit<64>)pace_frame_ns);
        }
    }

    /* Held: it waits by recirculation or round the hold loop (end of apply). */
    action hold() {
        meta.held = 1;
    }

    action discard(bit<32> reason) {
        /* Counted by FabricIngress.drop_counter on the next ingress pass. */
        meta.verdict = reason + 1;
        meta.held = 1;
    }

    apply {
        index = (bit<32>)standard_metadata.egress_port * NUM_CLASSES + (bit<32>)meta.cls;
        in_index = (bit<32>)meta.in_port * NUM_CLASSES + (bit<32>)meta.in_cls;
        now_ns = (bit<64>)standard_metadata.egress_global_timestamp * 1000;
        bool is_clone = standard_metadata.instance_type == INSTANCE_INGRESS_CLONE
                        || standard_metadata.instance_type == INSTANCE_EGRESS_CLONE;
        bool hold_copy = standard_metadata.instance_type == INSTANCE_EGRESS_CLONE
                         && standard_metadata.egress_port == HOLD_OUT_PORT;

        if (hold_copy) {
            /* ---- a held frame going round the hold loop (hold_loop.p4) */
            hold_pack(hdr, meta);
        } else if (is_clone && meta.fc_op != FC_OP_NONE) {
            /* ---- a clone becomes a flow-control frame */
            index = (bit<32>)standard_metadata.egress_port * NUM_CLASSES
                    + (bit<32>)meta.fc_cls;
            hdr.ethernet.src_addr = SWITCH_MAC_PREFIX | (bit<48>)standard_metadata.egress_port;
            hdr.bth.setInvalid();
            hdr.app.setInvalid();
            hdr.probe.setInvalid();
            hdr.hello.setInvalid();
            if (meta.fc_op == FC_OP_PAUSE || meta.fc_op == FC_OP_RESUME) {
                bit<16> quanta = 0;
                if (meta.fc_op == FC_OP_PAUSE) {
                    quanta = PFC_PAUSE_QUANTA;
                }
                hdr.ethernet.dst_addr = PFC_DST_MAC;
                hdr.ethernet.ether_type = ETHERTYPE_MAC_CONTROL;
                hdr.lrh.setInvalid();
                hdr.credit.setInvalid();
                hdr.pfc.setValid();
                hdr.pfc.opcode = PFC_OPCODE;
                hdr.pfc.class_enable = (bit<16>)1 << meta.fc_cls;
                hdr.pfc.quanta0 = 0;
                hdr.pfc.quanta1 = 0;
                hdr.pfc.quanta2 = 0;
                hdr.pfc.quanta3 = 0;
                hdr.pfc.quanta4 = 0;
                hdr.pfc.quanta5 = 0;
                hdr.pfc.quanta6 = 0;
                hdr.pfc.quanta7 = 0;
                if (meta.fc_cls == 0) { hdr.pfc.quanta0 = quanta; }
                if (meta.fc_cls == 1) { hdr.pfc.quanta1 = quanta; }
                if (meta.fc_cls == 2) { hdr.pfc.quanta2 = quanta; }
                if (meta.fc_cls == 3) { hdr.pfc.quanta3 = quanta; }
                if (meta.fc_cls == 4) { hdr.pfc.quanta4 = quanta; }
                if (meta.fc_cls == 5) { hdr.pfc.quanta5 = quanta; }
                if (meta.fc_cls == 6) { hdr.pfc.quanta6 = quanta; }
                if (meta.fc_cls == 7) { hdr.pfc.quanta7 = quanta; }
                pause_tx.count(index);
            } else {
                /* FCCL = ABR + free receive blocks; FCTBS = what we sent that way. */
                bit<12> abr;
                bit<32> occupancy;
                bit<12> fctbs;
                fc_abr.read(abr, index);
                fc_buffer.read(occupancy, index);
                fc_fctbs.read(fctbs, index);
                bit<32> free = 0;
                if (meta.fc_credit_limit > occupancy) {
                    free = meta.fc_credit_limit - occupancy;
                }
                hdr.ethernet.dst_addr = CREDIT_DST_MAC;
                hdr.ethernet.ether_type = ETHERTYPE_FABRIC;
                hdr.pfc.setInvalid();
                hdr.lrh.setValid();
                hdr.lrh.vl = (bit<4>)meta.fc_cls;
                hdr.lrh.sl = 0;
                hdr.lrh.kind = KIND_CREDIT;
                hdr.lrh.dlid = 0;
                hdr.lrh.slid = 0;
                hdr.lrh.pkt_len = 4;
                hdr.credit.setValid();
                hdr.credit.op = CREDIT_OP_NORMAL;
                if (meta.fc_op == FC_OP_CREDIT_REQ) {
                    hdr.credit.op = CREDIT_OP_REQUEST;
                }
                hdr.credit.vl = (bit<4>)meta.fc_cls;
                hdr.credit.fctbs = fctbs;
                hdr.credit.fccl = abr + free[11:0];
                credit_tx.count(index);
            }
            truncate(FC_FRAME_BYTES);
        } else if (hdr.notify.isValid()) {
            /* ---- fault notification (notify.p4): a NOTIFY copy of the flood. */
            hdr.ethernet.src_addr = SWITCH_MAC_PREFIX | (bit<48>)standard_metadata.egress_port;
            notify_tx.count((bit<32>)standard_metadata.egress_port);
            truncate(FC_FRAME_BYTES);
        } else if (meta.is_data == 1 && meta.cfg.mode == FC_LOSSY) {
            meta.held = 0;
            class_tx.count(index);
            queue_release((bit<32>)standard_metadata.egress_port);
        } else if (meta.is_data == 1) {
            /* ---- the transmit gate of (egress port, class) */
            bit<32> head;
            bit<32> tail;
            fc_queue_head.read(head, index);
            fc_queue_tail.read(tail, index);
            if (meta.has_ticket == 1 && head - meta.ticket < 0x80000000
                    && head != meta.ticket) {
                /* Our ticket was skipped as lost although we are alive: it will
                 * never be the head again, so queue again at the tail rather
                 * than wait (and hold our ingress buffer) for good. */
                meta.has_ticket = 0;
            }
            bool first = (head == tail);
            if (meta.has_ticket == 1) {
                first = (meta.ticket == head);
            }
            if (first) {
                fc_head_seen_ns.write(index, now_ns);
                fc_head_missed.write(index, 0);
            } else if (meta.has_ticket == 1) {
                /* A live head comes back after every recirculation; one not
                 * seen for HEAD_LOST_NS was lost (a target may drop recirculated
                 * packets): skip its ticket, or the queue would wait forever.
                 * Time alone is no proof: a switch that stalls (descheduled, or
                 * a port timeline catching up) sees a long gap with its head
                 * alive. The other holders also had to come by many times, while
                 * a live head comes by once per round of the held frames. */
                bit<64> head_seen;
                bit<32> missed;
                fc_head_seen_ns.read(head_seen, index);
                fc_head_missed.read(missed, index);
                missed = missed + 1;
                if (now_ns > head_seen + HEAD_LOST_NS
                        && missed > HEAD_LOST_ROUNDS * (tail - head)) {
                    fc_queue_head.write(index, head + 1);
                    tickets_served.count(index);
                    fc_head_seen_ns.write(index, now_ns);
                    missed = 0;
                }
                fc_head_missed.write(index, missed);
            }

            bool allowed = true;
            bool watchdog = false;
            if (meta.cfg.mode == FC_PFC) {
                bit<64> wd_until;
                bit<64> paused_until;
                fc_wd_until_ns.read(wd_until, index);
                fc_paused_until_ns.read(paused_until, index);
                if (now_ns < wd_until) {
                    watchdog = true;
                } else if (now_ns < paused_until) {
                    allowed = false;
                }
            } else if (meta.cfg.mode == FC_CREDIT) {
                bit<12> fctbs;
                bit<12> fccl;
                bit<1> known;
                fc_fctbs.read(fctbs, index);
                fc_fccl.read(fccl, index);
                fc_fccl_known.read(known, index);
                if (known == 0) {
                    /* Before the first CREDIT frame: the neighbour's buffer is
                     * assumed to be credit_limit blocks, like ours. */
                    fccl = meta.cfg.credit_limit[11:0];
                }
                /* IB: may send iff (FCCL - (FCTBS + blocks)) mod 4096 <= 2048. */
                if (fccl - (fctbs + 1) > 2048) {
                    allowed = false;
                }
            }

            bool expired = false;
            if (meta.cfg.hoq_lifetime_us != 0) {
                expired = standard_metadata.egress_global_timestamp - meta.arrival_ts
                          > (bit<48>)meta.cfg.hoq_lifetime_us;
            }

            /* A frame held for a port whose link went down would wait for credit
             * (or a resume) that never comes, and block its ingress buffer: it
             * is discarded and counted, as a switch flushes a dead port. */
            bool down = (meta.ports_down >> standard_metadata.egress_port)[0:0] == 1;
            /* ... or notified dead for this frame's DLID (notify.p4): no route left. */
            bool dead = down || meta.notified_dead == 1;

            bool paced = false;  /* held by the link pacer, not by flow control */
            if (first && allowed && !watchdog && !dead) {
                /* It would be sent: the link pacer, where the SM configured one. */
                egress_pace.apply();
                if (pace_frame_ns != 0) {
                    pace_admit((bit<32>)standard_metadata.egress_port);
                    if (pace_ok == 0) {
                        allowed = false;
                        paced = true;
                    }
                }
            }

            bit<64> seen_ns;
            blocked_seen_ns.read(seen_ns, index);
            bit<64> blocked_gain = 0;  /* blocked time to add to blocked_ns */

            if (first && (allowed || expired || dead)) {
                /* The head goes: sent, or discarded. */
                if (meta.has_ticket == 1) {
                    fc_queue_head.write(index, head + 1);
                    tickets_served.count(index);
                }
                if (seen_ns != 0) {
                    if (now_ns > seen_ns) {
                        blocked_gain = now_ns - seen_ns;
                    }
                    blocked_seen_ns.write(index, 0);
                }
                fc_wd_since_ns.write(index, 0);

                if (down) {
                    discard(DROP_LINK_DOWN);
                } else if (dead) {
                    discard(DROP_NO_ROUTE);
                } else if (!allowed) {
                    discard(DROP_HOQ_LIFETIME);
                } else if (watchdog) {
                    discard(DROP_WATCHDOG);
                } else {
                    meta.held = 0;
                    if (meta.cfg.mode == FC_CREDIT) {
                        bit<12> sent;
                        fc_fctbs.read(sent, index);
                        fc_fctbs.write(index, sent + 1);
                    }
                    class_tx.count(index);
                }

                /* It leaves the receive buffer of the port it came in on. */
                buffer_release(in_index);
                if (fc_released == 1) {
                    buffer_out.count(in_index);
                }
                if (fc_signal_due == 1) {
                    bit<8> signal = FC_OP_CREDIT;
                    if (meta.cfg.mode == FC_PFC) {
                        signal = FC_OP_RESUME;
                    }
                    fc_clone(signal, meta.in_cls, FC_SESSION_BASE + (bit<32>)meta.in_port);
                }
            } else {
                /* Wait: take a place in the queue, come back after a recirculation. */
                if (meta.has_ticket == 0) {
                    meta.has_ticket = 1;
                    meta.ticket = tail;
                    fc_queue_tail.write(index, tail + 1);
                    tickets_issued.count(index);
                }
                if (first) {
                    if (seen_ns != 0 && now_ns > seen_ns) {
                        blocked_gain = now_ns - seen_ns;
                    }
                    blocked_seen_ns.write(index, now_ns | 1);
                    if (meta.cfg.mode == FC_PFC && meta.cfg.watchdog_detect_us != 0 && !paced) {
                        bit<64> since;
                        fc_wd_since_ns.read(since, index);
                        if (since == 0) {
                            fc_wd_since_ns.write(index, now_ns | 1);
                        } else if (now_ns > since + (bit<64>)meta.cfg.watchdog_detect_us * 1000) {
                            fc_wd_until_ns.write(index,
                                now_ns + (bit<64>)meta.cfg.watchdog_restore_us * 1000);
                            fc_wd_since_ns.write(index, 0);
                        }
                    }
                    if (meta.cfg.mode == FC_CREDIT) {
                        /* A lost CREDIT frame must not stall the link for good:
                         * ask the neighbour again while we wait. */
                        bit<64> asked;
                        fc_credit_req_ns.read(asked, index);
                        if (asked == 0 || now_ns > asked + CREDIT_REQUEST_INTERVAL_NS) {
                            fc_credit_req_ns.write(index, now_ns | 1);
                            fc_clone(FC_OP_CREDIT_REQ, meta.cls,
                                     FC_SESSION_BASE + (bit<32>)standard_metadata.egress_port);
                        }
                    }
                }
                hold();
            }
            /* blocked_ns, and its counter form: one blocked_quanta step per
             * BLOCKED_QUANTUM_NS it completes, two at most per frame through this gate.
             * Every frame steps the lag, not only a look at a blocked head: on a loaded
             * machine a held head comes round bmv2's hold loop every 50-100 ms, which
             * adds 12-24 quanta, and the frames that follow the unblock catch them up. */
            bit<64> blocked;
            blocked_ns.read(blocked, index);
            if (blocked_gain != 0) {
                blocked = blocked + blocked_gain;
                blocked_ns.write(index, blocked);
            }
            bit<32> due = (bit<32>)(blocked >> BLOCKED_QUANTUM_SHIFT);
            bit<32> counted;
            blocked_quanta_counted.read(counted, index);
            if (due != counted) {
                blocked_quanta.count(index);
                counted = counted + 1;
                if (due != counted) {
                    blocked_quanta.count(index);
                    counted = counted + 1;
                }
                blocked_quanta_counted.write(index, counted);
            }
        }
        if (meta.held == 1 && !hold_copy) {
            if (meta.hold_loop == 1 && meta.egress_cloned == 0) {
                clone_preserving_field_list(CloneType.E2E, HOLD_SESSION, FL_HOLD);
                mark_to_drop(standard_metadata);
            } else {
                recirculate_preserving_field_list(FL_HOLD);
            }
        } else if (meta.held == 0) {
            tx_port_counter.count((bit<32>)standard_metadata.egress_port);
        }
    }
}

#endif
