#ifndef FABRICLAB_NOTIFY_P4
#define FABRICLAB_NOTIFY_P4

/* Fault notification upstream (docs/fabric.md "Fault notification").
 *
 * A switch that must drop a data frame because every port its route offers
 * (primary, backup) is down or notified dead turns it into a NOTIFY frame
 * (LRH kind NOTIFY, the frame's DLID) and floods it to its switch neighbours
 * (multicast group NOTIFY_GROUP), the sender among them. A neighbour records
 * "port p is dead for DLID d" in notify_pruned and treats p like a down port
 * for d: it uses its own backup, or, left with no way, floods the NOTIFY on
 * at once. So the notification travels as far as needed, in the data plane
 * alone.
 *
 * The SM configures it (FabricIngress.notify_config and the multicast group):
 * the ports where NOTIFY frames are sent and taken (switch-to-switch ports;
 * 0 = off), and a route epoch it bumps after every global reroute. A record
 * holds the epoch it was made in and counts only while that is the switch's
 * epoch, so the SM's new routes replace every patch at once without writing a
 * register (bmv2's P4Runtime server cannot). A NOTIFY of another epoch is
 * ignored. */

/* Records exist for unicast LIDs (dlid_route's size). */
const bit<32> NOTIFY_LIDS = 49152;
const bit<8>  NOTIFY_OP_UNREACHABLE = 1;
/* The multicast group the SM gives every switch: its switch-to-switch ports. */
const bit<16> NOTIFY_GROUP = (bit<16>)(bit<32>)FabricConst.NOTIFY_GROUP;

/* Per DLID: [47:32] epoch, [31:16] and [15:0] two ports notified dead for it,
 * each stored as port + 1 (0 = none). Two: a route offers a primary and a backup. */
register<bit<64>, bit<32>>(NOTIFY_LIDS) notify_pruned;

/* NOTIFY frames sent out of / received on a port. */
counter(NUM_PORTS, CounterType.packets) notify_tx;
counter(NUM_PORTS, CounterType.packets) notify_rx;

#endif
