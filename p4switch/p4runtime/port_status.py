"""Port up/down events on the StreamChannel (a fabriclab extension).

P4Runtime has no port-status message, so the server defines two small messages
carried in the stream's `other` (google.protobuf.Any) fields:

* client -> server `fabriclab.p4runtime.PortStatusSubscribe {}`: subscribe
  this stream; the server answers with one `PortStatus` per port it knows, then
  one on every carrier change.
* server -> client `fabriclab.p4runtime.PortStatus {uint32 port; bool up;
  uint64 timestamp_ns}`.

Only subscribed streams receive them, so ordinary P4Runtime clients see nothing
unusual. The messages are built at import time (no generated code needed);
clients import `PortStatus` and `PortStatusSubscribe` from here.
"""

from __future__ import annotations

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

PACKAGE = "fabriclab.p4runtime"


def _build():
    fdp = descriptor_pb2.FileDescriptorProto(
        name="fabriclab/p4runtime/port_status.proto", package=PACKAGE, syntax="proto3"
    )
    fdp.message_type.add(name="PortStatusSubscribe")
    ps = fdp.message_type.add(name="PortStatus")
    F = descriptor_pb2.FieldDescriptorProto
    ps.field.add(name="port", number=1, type=F.TYPE_UINT32, label=F.LABEL_OPTIONAL)
    ps.field.add(name="up", number=2, type=F.TYPE_BOOL, label=F.LABEL_OPTIONAL)
    ps.field.add(name="timestamp_ns", number=3, type=F.TYPE_UINT64, label=F.LABEL_OPTIONAL)
    pool = descriptor_pool.Default()
    try:
        fd = pool.FindFileByName(fdp.name)
    except KeyError:
        pool.Add(fdp)
        fd = pool.FindFileByName(fdp.name)
    factory = message_factory.MessageFactory(pool)
    return (
        factory.GetPrototype(fd.message_types_by_name["PortStatusSubscribe"]),
        factory.GetPrototype(fd.message_types_by_name["PortStatus"]),
    )


PortStatusSubscribe, PortStatus = _build()
