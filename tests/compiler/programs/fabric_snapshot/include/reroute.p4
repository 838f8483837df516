#ifndef FABRICLAB_REROUTE_P4
#define FABRICLAB_REROUTE_P4
register<bit<1>, bit<32>>(NUM_PORTS) port_down;

control Reroute(inout metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    apply {
        bit<1> primary_down;
        port_down.read(primary_down, (bit<32>)meta.route_primary);
        if (primary_down == 0) {
            standard_metadata.egress_spec = meta.route_primary;
        } else if (meta.route_has_backup == 1) {
            bit<1> backup_down;
            port_down.read(backup_down, (bit<32>)meta.route_backup);
            if (backup_down == 0) {
                standard_metadata.egress_spec = meta.route_backup;
            } else {
                meta.routed = 0;
            }
        } else {
            meta.routed = 0;
        }
    }
}
#endif
