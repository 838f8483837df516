"""Fast-reroute liveness: which ports of a switch are down, as fabric.p4 reads it.

`FabricIngress.port_liveness` is a keyless table whose default action
`set_ports_down(down)` carries one bit per port (bit p set = port p down); the
data plane uses the backup port of every route whose primary is down
(docs/fabric.md). A table default entry and not a register because bmv2's
P4Runtime server does not implement register writes: written this way, the
same agent and SM work on the embedded switch and on simple_switch_grpc.

The whole mask is written at once, so the writer keeps the set of down ports
(`Liveness`); a fresh writer starts from what the switch holds.
"""

from __future__ import annotations

from collections.abc import Iterable

from p4.v1 import p4runtime_pb2

from controller.p4info import decode
from controller.p4runtime_client import SwitchConnection

LIVENESS_TABLE = "FabricIngress.port_liveness"
LIVENESS_ACTION = "FabricIngress.set_ports_down"
LIVENESS_PARAM = "down"


def mask_of(down: Iterable[int]) -> int:
    mask = 0
    for port in down:
        mask |= 1 << port
    return mask


def ports_of(mask: int) -> set[int]:
    return {p for p in range(mask.bit_length()) if mask >> p & 1}


def update(conn: SwitchConnection, down: Iterable[int]) -> p4runtime_pb2.Update:
    """The MODIFY of port_liveness's default entry that marks exactly `down` down."""
    p4info = conn.p4info
    if p4info is None:
        raise ValueError(f"switch {conn.name}: no pipeline yet (no port_liveness table)")
    entry = p4info.table_entry(LIVENESS_TABLE, {}, LIVENESS_ACTION,
                               {LIVENESS_PARAM: mask_of(down)})
    entry.is_default_action = True
    return SwitchConnection.modify(entry)


def read_down_ports(conn: SwitchConnection) -> set[int]:
    """The ports the switch's port_liveness marks down (empty before any write)."""
    query = p4runtime_pb2.TableEntry(table_id=conn.p4info.table(LIVENESS_TABLE).id,
                                     is_default_action=True)
    for entity in conn.read([p4runtime_pb2.Entity(table_entry=query)]):
        for param in entity.table_entry.action.action.params:
            return ports_of(decode(param.value))
    return set()


class Liveness:
    """The down ports of one switch, written through one connection."""

    def __init__(self, conn: SwitchConnection, down: Iterable[int] | None = None) -> None:
        self.conn = conn
        self.down = set(read_down_ports(conn) if down is None else down)

    def set(self, port: int, up: bool) -> None:
        """Mark `port` up or down (one Write of the whole mask)."""
        down = self.down - {port} if up else self.down | {port}
        self.conn.write([update(self.conn, down)])
        self.down = down
