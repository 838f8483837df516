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
/* blocked_ns again as a counter, for bmv2 (below): one step per BLOCKED_QUANTUM_NS
 * (2^22 ns, 4.194 ms) of blocked time, two at most per frame through the gate, so
 * blocked_ns >= blocked_quanta * quantum, and less than two quanta more once a frame
 * has passed the port since; blocked_quanta_counted is the steps taken. */
const bit<8> BLOCKED_QUANTUM_SHIFT = 22;
counter(NUM_PORTS * NUM_CLASSES, CounterType.packets) blocked_quanta;
register<bit<32>, bit<32>>(NUM_PORTS * NUM_CLASSES) blocked_quanta_counted;
/* When the head was last seen blocked (0: not blocked). */
register<bit<64>, bit<32>>(NUM_PORTS * NUM_CLASSES) blocked_seen_ns;

/* Highest buffer occupancy (packets) seen per (ingress port, class). */
register<bit<32>, bit<32>>(NUM_PORTS * NUM_CLASSES) buffer_peak;

/* The registers above and fc_buffer/fc_queue_* (flow_control.p4) again as counters,
 * because bmv2's P4Runtime server reads counters but not registers. Each counts one
 * step of its register, so controller/readout.py derives the register's value:
 * fc_buffer = buffer_in - buffer_out; fc_queue_tail = tickets_issued;
 * fc_queue_head = tickets_served; buffer_peak = peak_rises (the occupancy grows by
 * one frame at a time, so a new peak is always the old one plus one). blocked_ns, a
 * sum of durations, is counted in quanta (blocked_quanta, above). */
counter(NUM_PORTS * NUM_CLASSES, CounterType.packets) buffer_in;
counter(NUM_PORTS * NUM_CLASSES, CounterType.packets) buffer_out;
counter(NUM_PORTS * NUM_CLASSES, CounterType.packets) tickets_issued;
counter(NUM_PORTS * NUM_CLASSES, CounterType.packets) tickets_served;
counter(NUM_PORTS * NUM_CLASSES, CounterType.packets) peak_rises;

#endif
