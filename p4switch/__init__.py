"""The embedded P4 switch: executes a bmv2 JSON with v1model semantics and serves P4Runtime."""

import os as _os

# The switch starts builder processes (p4switch/builder.py) with subprocess, which forks
# where it cannot vfork; the child only execs, so gRPC's fork handlers (which log a line
# and pause at every fork while its threads are busy) are not wanted. Read when gRPC
# starts, so it must be set before a server or channel exists.
_os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")
