"""Routing engines, each a separate module behind one interface (as OpenSM's).

An engine turns a fabric and its LIDs into linear forwarding tables:
`route(fabric, lids) -> {switch name: {dlid: egress port}}`. Diagnostics
(deadlock check, path balance) take that output, whichever engine made it.
"""

from __future__ import annotations

from typing import Protocol

from topologies.description import Fabric

# switch name -> {destination LID: egress port}
Routes = dict[str, dict[int, int]]


class RoutingEngine(Protocol):
    name: str

    def route(self, fabric: Fabric, lids: dict[str, int]) -> Routes:
        """Forwarding tables for every switch towards every LID in `lids`."""


def engine(name: str) -> RoutingEngine:
    """The engine called `name` (as given to `--engine`)."""
    from controller.routing.minhop import MinHop

    engines = {MinHop.name: MinHop}
    if name not in engines:
        raise KeyError(f"unknown routing engine {name!r}; known: {sorted(engines)}")
    return engines[name]()
