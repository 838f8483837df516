"""VL arbitration tables: the embedded switch's architecture extern (docs/switch.md).

An ExternEntry of type P4RUNTIME_EXTERN_TYPE_ID (traffic/vl_arbitration.py) per
port (extern_id), its entry a google.protobuf.Struct of VlArbitration.as_dict();
INSERT and MODIFY set the port's table, DELETE returns it to strict priority.
Other extern types are UNIMPLEMENTED, as on simple_switch_grpc."""

from __future__ import annotations

from google.protobuf import json_format, struct_pb2
from p4.v1 import p4runtime_pb2

from traffic.vl_arbitration import P4RUNTIME_EXTERN_TYPE_ID

from .errors import already_exists, invalid, not_found, unimplemented
from .store_common import DELETE, INSERT, Undo, dp_call


class VlArbitrationWrites:
    """Mixin of PipelineState: `self.vl_arbitration` maps port -> the table as written."""

    def _write_vl_arbitration(self, kind: int, e: p4runtime_pb2.ExternEntry) -> Undo:
        if e.extern_type_id != P4RUNTIME_EXTERN_TYPE_ID:
            raise unimplemented(f"extern type {e.extern_type_id:#x} is not supported "
                                f"(only {P4RUNTIME_EXTERN_TYPE_ID:#x}, VL arbitration)")
        port = e.extern_id
        before = self.vl_arbitration.get(port)
        if kind == DELETE:
            if before is None:
                raise not_found(f"port {port} has no VL arbitration table")
            table = None
        else:
            if (kind == INSERT) != (before is None):
                raise (already_exists if before is not None else not_found)(
                    f"VL arbitration of port {port}")
            body = struct_pb2.Struct()
            if not e.entry.Unpack(body):
                raise invalid("VL arbitration entry must be a google.protobuf.Struct")
            table = json_format.MessageToDict(body)
        dp_call(self.dp.port_set_vl_arbitration, port, table)
        self._store_vl_arbitration(port, table)

        def undo() -> None:
            self.dp.port_set_vl_arbitration(port, before)
            self._store_vl_arbitration(port, before)
        return undo

    def _store_vl_arbitration(self, port: int, table: dict | None) -> None:
        if table is None:
            self.vl_arbitration.pop(port, None)
        else:
            self.vl_arbitration[port] = table
