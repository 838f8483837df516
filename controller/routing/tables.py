"""Linear forwarding tables: what a routing engine hands to the SM and the diagnostics.

An InfiniBand switch holds a linear forwarding table (LFT): one byte per
destination LID, the egress port, 0xFF for "no route". `ForwardingTable` is
that table in a bytearray, seen as a `{dlid: port}` mapping, so a fabric of
110,000 endpoints and 7,000 switches needs 7,000 x 110 KB instead of hundreds
of millions of dict entries, and an engine can fill whole LID ranges with one
slice assignment.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, MutableMapping

NO_PORT = 0xFF  # an LFT entry without a route; also the largest port + 1 a table can hold


class RoutingError(ValueError):
    """A fabric an engine cannot route, or a port a forwarding table cannot hold."""


class ForwardingTable(MutableMapping[int, int]):
    """{dlid: egress port} stored as one byte per LID (NO_PORT = no route)."""

    __slots__ = ("ports",)

    def __init__(self, size: int = 0, ports: bytearray | None = None) -> None:
        self.ports = ports if ports is not None else bytearray(b"\xff" * size)

    @classmethod
    def from_mapping(cls, routes: Mapping[int, int]) -> ForwardingTable:
        table = cls(max(routes, default=-1) + 1)
        for dlid, port in routes.items():
            table[dlid] = port
        return table

    def __getitem__(self, dlid: int) -> int:
        if 0 <= dlid < len(self.ports):
            port = self.ports[dlid]
            if port != NO_PORT:
                return port
        raise KeyError(dlid)

    def __setitem__(self, dlid: int, port: int) -> None:
        if not 0 <= port < NO_PORT:
            raise RoutingError(f"port {port} does not fit a forwarding table (0..{NO_PORT - 1})")
        if dlid >= len(self.ports):
            self.ports.extend(b"\xff" * (dlid + 1 - len(self.ports)))
        self.ports[dlid] = port

    def __delitem__(self, dlid: int) -> None:
        if self.get(dlid) is None:
            raise KeyError(dlid)
        self.ports[dlid] = NO_PORT

    def __iter__(self) -> Iterator[int]:
        for dlid, port in enumerate(self.ports):
            if port != NO_PORT:
                yield dlid

    def __len__(self) -> int:
        return len(self.ports) - self.ports.count(NO_PORT)

    def __repr__(self) -> str:
        return f"ForwardingTable({dict(self.items())})"


# switch name -> its forwarding table ({dlid: port}; plain dicts are accepted everywhere)
Routes = dict[str, MutableMapping[int, int]]


def as_tables(routes: Mapping[str, Mapping[int, int]]) -> dict[str, ForwardingTable]:
    """The same routes as ForwardingTables (no copy for those that already are)."""
    return {name: table if isinstance(table, ForwardingTable)
            else ForwardingTable.from_mapping(table) for name, table in routes.items()}
