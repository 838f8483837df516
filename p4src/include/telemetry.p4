#ifndef FABRICLAB_TELEMETRY_P4
#define FABRICLAB_TELEMETRY_P4

/* What the analysis reads over P4Runtime (CounterEntry / RegisterEntry). Every
 * array is indexed port * NUM_CLASSES + class; "class" is the VL in credit mode
 * and the PFC priority in PFC mode. Data frames only: flow-control frames have
 * their own counters and are never counted as data. Drops by reason are
 * FabricIngress.drop_counter (headers.p4). */

/* Data frames admitted at ingress, by (ingress port, class). */
counter(NUM_PORTS * NUM_CLASSES, CounterType.packets_and_bytes) class_rx;
/* Data frames transmitted, by (egress port, class). */
counter(NUM_PORTS * NUM_CLASSES, CounterType.packets_and_bytes) class_tx;

/* 802.1Qbb frames sent out of / received on a port, per priority (a resume counts). */
counter(NUM_PORTS * NUM_CLASSES, CounterType.packets) pause_tx;
counter(NUM_PORTS * NUM_CLASSES, CounterType.packets) pause_rx;
/* CREDIT frames sent out of / received on a port, per VL. */
counter(NUM_PORTS * NUM_CLASSES, CounterType.packets) credit_tx;
counter(NUM_PORTS * NUM_CLASSES, CounterType.packets) credit_rx;

/* Cumulative time (ns) the head of an (egress port, class) queue waited for a
 * pause to end or for credit; updated each time the head is looked at, so it
 * lags by at most one recirculation interval. */
register<bit<64>, bit<32>>(NUM_PORTS * NUM_CLASSES) blocked_ns;
/* When the head was last seen blocked (0: not blocked). */
register<bit<64>, bit<32>>(NUM_PORTS * NUM_CLASSES) blocked_seen_ns;

/* Highest buffer occupancy (packets) seen per (ingress port, class). */
register<bit<32>, bit<32>>(NUM_PORTS * NUM_CLASSES) buffer_peak;

#endif
