/* fabriclab fabric program (v1model).
 *
 * Ethernet + the fabric LRH, forwarding by DLID through SM-installed tables
 * with a backup port per destination (fast reroute), three link-level
 * flow-control modes chosen at run time (LOSSY, PFC, CREDIT), drops counted
 * per port and reason, telemetry counters and registers, fault notification
 * upstream (NOTIFY frames, notify.p4), PROBE/HELLO/SA
 * frames punted to the SM, packet-out from the SM. docs/fabric.md describes the
 * design and the contract with the subnet manager. */
#include <core.p4>
#include <v1model.p4>

#include "include/headers.p4"
#include "include/hold_loop.p4"
#include "include/parser.p4"
#include "include/telemetry.p4"
#include "include/notify.p4"
#include "include/flow_control.p4"
#include "include/forwarding.p4"

V1Switch(FabricParser(),
         FabricVerifyChecksum(),
         FabricIngress(),
         FabricEgress(),
         FabricComputeChecksum(),
         FabricDeparser()) main;
