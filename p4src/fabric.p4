/* fabriclab fabric program (v1model).
 *
 * First slice: Ethernet + the fabric LRH, forwarding by DLID through an exact
 * table filled by the subnet manager, drops counted per port and reason,
 * PROBE/HELLO frames punted to the SM, packet-out from the SM. The flow-control
 * modes and fast reroute plug in here (see DESIGN.md). */
#include <core.p4>
#include <v1model.p4>

#include "include/headers.p4"
#include "include/parser.p4"
#include "include/forwarding.p4"

V1Switch(FabricParser(),
         FabricVerifyChecksum(),
         FabricIngress(),
         FabricEgress(),
         FabricComputeChecksum(),
         FabricDeparser()) main;
