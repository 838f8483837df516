"""Routing engines, each a separate module behind one interface (as OpenSM's).

An engine turns a fabric and its LIDs into linear forwarding tables:
`route(fabric, lids) -> {switch name: {dlid: egress port}}` (a
`ForwardingTable` per switch, see tables.py). Diagnostics (deadlock check, VL
assignment, path balance, backup loop check) take that output, whichever
engine made it (diagnostics.py, backup.py).

| engine | module | for |
|---|---|---|
| minhop | minhop.py | any fabric; shortest paths, balanced; may deadlock |
| updn   | updn.py   | any fabric; up*/down* from the top tier; deadlock-free |
| ftree  | ftree.py  | fat trees (leveled Clos); d-mod-k up-ports; deadlock-free |
"""

from __future__ import annotations

from typing import Protocol

from controller.routing.tables import ForwardingTable, Routes, RoutingError
from topologies.description import Fabric

__all__ = ["ENGINES", "ForwardingTable", "Routes", "RoutingEngine", "RoutingError", "engine"]

ENGINES = ("minhop", "updn", "ftree")


class RoutingEngine(Protocol):
    name: str

    def route(self, fabric: Fabric, lids: dict[str, int]) -> Routes:
        """Forwarding tables for every switch towards every LID in `lids`."""


def engine(name: str) -> RoutingEngine:
    """The engine called `name` (as given to `--engine`)."""
    from controller.routing.ftree import FatTree
    from controller.routing.minhop import MinHop
    from controller.routing.updn import UpDown

    engines = {e.name: e for e in (MinHop, UpDown, FatTree)}
    if name not in engines:
        raise KeyError(f"unknown routing engine {name!r}; known: {sorted(engines)}")
    return engines[name]()
