/* Snapshot of p4src/fabric.p4 and p4src/include/ (with an earlier Reroute
 * sub-control) taken for stable golden tests of the compiler; the live program
 * is compiled by test_cli.py::test_project_fabric_program_compiles. */
#include <core.p4>
#include <v1model.p4>
#include "include/headers.p4"
#include "include/telemetry.p4"
#include "include/reroute.p4"
#include "include/flow_control.p4"
#include "include/parser.p4"
#include "include/forwarding.p4"
V1Switch(FabricParser(), FabricVerifyChecksum(), FabricIngress(), FabricEgress(),
         FabricComputeChecksum(), FabricDeparser()) main;
