"""The embedded P4 switch: executes a bmv2 JSON with v1model semantics and serves P4Runtime."""
