"""P4Runtime server internals: P4Info indexing, arbitration, entity translation.

The public entry points are in `p4switch.p4runtime_server` (`serve`,
`P4RuntimeServicer`); these modules are its parts.
"""
