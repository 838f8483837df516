#ifndef FABRICLAB_REROUTE_P4
#define FABRICLAB_REROUTE_P4

/* Fast reroute. dlid_route gives a primary and (forward_frr) a backup egress
 * port per destination; this register says which ports are down. The switch's
 * local agent writes it over P4Runtime the moment a carrier drops, so every
 * destination using that port moves to its backup with no per-destination
 * update; FabricIngress applies it after dlid_route. 0 (the reset value) means
 * up, so a switch forwards before anyone has written the register. */
register<bit<1>, bit<32>>(NUM_PORTS) port_down;

#endif
