#ifndef FABRICLAB_HOLD_LOOP_P4
#define FABRICLAB_HOLD_LOOP_P4

/* The hold loop: where a held frame waits on real bmv2.
 *
 * A frame that may not leave (flow_control.p4, hold() and discard()) waits by
 * recirculation by default. Real simple_switch serves recirculated packets
 * strictly before new arrivals and as fast as it can, so while a queue is held
 * its frames starve the ingress: the CREDIT and resume frames that would
 * release them are never read. On bmv2 the run therefore wires two switch
 * ports, HOLD_OUT_PORT -> HOLD_IN_PORT, through a relay that gives held frames
 * back paced and in their queue's ticket order (topologies/hold_loop.py,
 * topologies/hold_relay.py: the relay reads hold_t); the SM turns the loop on with
 * hold_loop_config's default action and clone session HOLD_SESSION ->
 * HOLD_OUT_PORT (controller/flow_control.py). Then a held frame leaves egress
 * as an E2E clone preserving FL_HOLD to that session (the original dropped);
 * the clone's own egress pass puts FL_HOLD in a hold header in front of the
 * frame (hold_pack); the parser takes that header on HOLD_IN_PORT and ingress
 * restores the metadata from it (hold_unpack) and carries on exactly as for a
 * recirculated frame. Arrivals on the fabric ports are served between a held
 * frame's passes, at the loop's pace.
 *
 * bmv2 makes one E2E clone per egress pass: a pass that already made one (a
 * resume, a CREDIT frame, a credit request) holds its frame by recirculation,
 * once. Without the configuration (the default; the embedded switch) nothing
 * changes: held frames recirculate. */

const port_t   HOLD_OUT_PORT = (port_t)(bit<32>)FabricConst.HOLD_OUT_PORT;
const port_t   HOLD_IN_PORT  = (port_t)(bit<32>)FabricConst.HOLD_IN_PORT;
const bit<32>  HOLD_SESSION  = (bit<32>)FabricConst.HOLD_SESSION;
const bit<16>  HOLD_MAGIC    = 0x484C;  /* "HL": anything else on HOLD_IN_PORT is dropped */

/* Egress, on the hold copy (an E2E clone out of HOLD_OUT_PORT): FL_HOLD, which
 * the clone kept, into the hold header. */
action hold_pack(inout headers_t hdr, in metadata_t meta) {
    hdr.hold.setValid();
    hdr.hold.magic = HOLD_MAGIC;
    hdr.hold.is_data = meta.is_data;
    hdr.hold.held = meta.held;
    hdr.hold.has_ticket = meta.has_ticket;
    hdr.hold.ticket = meta.ticket;
    hdr.hold.arrival_ts = meta.arrival_ts;
    hdr.hold.verdict = meta.verdict;
    hdr.hold.in_port = meta.in_port;
    hdr.hold.in_cls = meta.in_cls;
    hdr.hold.out_port = meta.out_port;
    hdr.hold.cls = meta.cls;
    hdr.hold.pad = 0;
}

/* Ingress, on a frame back from the loop: the metadata a recirculation would
 * have kept, and the frame without the hold header. */
action hold_unpack(inout headers_t hdr, inout metadata_t meta) {
    meta.is_data = hdr.hold.is_data;
    meta.held = hdr.hold.held;
    meta.has_ticket = hdr.hold.has_ticket;
    meta.ticket = hdr.hold.ticket;
    meta.arrival_ts = hdr.hold.arrival_ts;
    meta.verdict = hdr.hold.verdict;
    meta.in_port = hdr.hold.in_port;
    meta.in_cls = hdr.hold.in_cls;
    meta.out_port = hdr.hold.out_port;
    meta.cls = hdr.hold.cls;
    hdr.hold.setInvalid();
}

#endif
