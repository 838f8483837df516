"""The embedded P4 switch: executes a bmv2 JSON with v1model semantics and serves P4Runtime."""

import os as _os

# The switch forks to build its fast path off the data plane (p4switch/specialisation.py);
# the child runs Python only, never gRPC, so gRPC's fork handlers (which log a line and
# pause at every fork while its threads are busy) are not wanted. Read when gRPC
# starts, so it must be set before a server or channel exists.
_os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")
