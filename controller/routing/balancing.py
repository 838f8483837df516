"""Balanced table filling shared by the shortest-path engines (min-hop, up*/down*).

An engine says, per destination switch, which ports of every switch are
acceptable next hops; this fills the LFTs in LID order, each switch taking the
acceptable port that carries the fewest destinations so far (ties: lowest
port), as OpenSM's unicast manager balances its min-hop tables.
"""

from __future__ import annotations

from collections.abc import Callable

from controller.routing.graph import SwitchGraph
from controller.routing.tables import ForwardingTable, Routes


def route_on_graph(graph: SwitchGraph,
                   candidates_for: Callable[[int], list[list[int]]]) -> Routes:
    """Fill LFTs destination by destination in LID order, each switch choosing the
    least-loaded of `candidates_for(destination switch)[switch]` (ties: lowest port)."""
    size = graph.max_lid + 1
    lfts = [bytearray(b"\xff" * size) for _ in graph.names]
    load = [dict.fromkeys((p for p, _peer, _pp in ports), 0) for ports in graph.links]
    cache: dict[int, list[list[int]]] = {}
    for dest in graph.destinations():
        root = dest.switch
        if dest.port:  # a host: its switch delivers it on the host port
            lfts[root][dest.lid] = dest.port
        candidates = cache.get(root)
        if candidates is None:
            candidates = cache[root] = candidates_for(root)
        lid = dest.lid
        for s, ports in enumerate(candidates):
            if not ports:
                continue
            loads = load[s]
            best = ports[0]
            if len(ports) > 1:
                best_load = loads[best]
                for port in ports[1:]:
                    if loads[port] < best_load:
                        best, best_load = port, loads[port]
            lfts[s][lid] = best
            loads[best] += 1
    return {name: ForwardingTable(ports=lft) for name, lft in zip(graph.names, lfts, strict=True)}
