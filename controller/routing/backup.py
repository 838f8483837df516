"""Backup ports for fast reroute: a loop-free alternate per (switch, DLID).

When a switch's primary port for a destination goes down, the data plane
(p4src/include/reroute.p4) sends on the backup port at once, before the SM has
recomputed anything. A backup must therefore deliver using the routes the
other switches already hold.

Generic rule (RFC 5286, loop-free alternates): neighbour N of switch S is an
LFA towards D when dist(N, D) < dist(N, S) + dist(S, D), min-hop distances;
for a direct neighbour that is dist(N, D) <= dist(S, D). Among the LFAs a
"downstream" one (dist(N, D) < dist(S, D)) is preferred, then the port
carrying the fewest backups so far, then the lowest port; a parallel cable to
the primary neighbour qualifies. Because the installed routes need not be
shortest paths (up*/down*, ftree), each candidate is also checked on the
actual tables: N's route to D must not come back through S. An engine may
provide its own `backups(fabric, lids, routes)` (ftree: another up port).

`single_failure_loops` verifies the result: for every switch-to-switch link
and every destination, with that link down (both switches using their backup
where the primary is the dead port), no forwarding loop.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from controller.routing.diagnostics import destination_trees
from controller.routing.graph import SwitchGraph
from controller.routing.tables import ForwardingTable, Routes
from topologies.description import Fabric


def backup_routes(fabric: Fabric, lids: dict[str, int], routes: Routes,
                  engine: object | None = None) -> Routes:
    """{switch: {dlid: backup port}}: the engine's own rule if it has one, else LFAs."""
    own = getattr(engine, "backups", None)
    if own is not None:
        return own(fabric, lids, routes)
    return loop_free_alternates(SwitchGraph.from_fabric(fabric, lids), routes)


def loop_free_alternates(graph: SwitchGraph, routes: Mapping[str, Mapping[int, int]]) -> Routes:
    backups: Routes = {name: ForwardingTable(graph.max_lid + 1) for name in graph.names}
    load = [dict.fromkeys((p for p, _v, _pp in links), 0) for links in graph.links]
    dist_cache: dict[int, list[int]] = {}
    for tree in destination_trees(graph, routes):
        root = tree.switch
        dist = dist_cache.get(root)
        if dist is None:
            dist = dist_cache[root] = graph.bfs([root])
        for s in range(graph.size):
            primary = tree.egress[s]
            if s == root or primary < 0 or not tree.reaches[s]:
                continue
            best = None
            for port, peer, _pp in graph.links[s]:
                if port == primary or dist[peer] < 0 or dist[peer] > dist[s]:
                    continue
                if not _delivers_avoiding(tree, peer, s):
                    continue
                key = (dist[peer] >= dist[s], load[s][port], port)  # downstream first
                if best is None or key < best:
                    best = key
            if best is not None:
                backups[graph.names[s]][tree.lid] = best[2]
                load[s][best[2]] += 1
    return backups


def _delivers_avoiding(tree, start: int, avoid: int) -> bool:
    """Primary forwarding from `start` reaches the destination without visiting `avoid`."""
    x = start
    while x >= 0 and x != tree.switch:
        if x == avoid or not tree.reaches[x]:
            return False
        x = tree.next_switch[x]
    return x == tree.switch


@dataclass(frozen=True)
class FailureCheck:
    """What single link failures do with primaries + backups."""

    failures: int  # (link, destination) cases where a primary used the dead link
    rerouted: int  # of those, delivered via backups
    dropped: int  # no usable backup on the way (not a loop: the data plane counts no_route)
    loops: list[str]  # forwarding loops, described

    @property
    def loop_free(self) -> bool:
        return not self.loops


def single_failure_loops(graph: SwitchGraph, routes: Mapping[str, Mapping[int, int]],
                         backups: Mapping[str, Mapping[int, int]]) -> FailureCheck:
    """Fail every switch-to-switch link in turn; look for loops towards every destination."""
    links = sorted({(min((s, p), (v, pp)), max((s, p), (v, pp)))
                    for s, ls in enumerate(graph.links) for p, v, pp in ls})
    backup_of = [getattr(backups.get(name, {}), "ports", None) or dict(backups.get(name, {}))
                 for name in graph.names]
    peers = [{p: v for p, v, _pp in ls} for ls in graph.links]
    failures = rerouted = dropped = 0
    loops: list[str] = []
    for tree in destination_trees(graph, routes):
        for (u, pu), (v, pv) in links:
            dead = {(u, pu), (v, pv)}
            for start in (u, v):
                if (start, tree.egress[start]) not in dead or not tree.reaches[start]:
                    continue
                failures += 1
                outcome = _walk_with_failure(tree, start, dead, backup_of, peers)
                if outcome is None:
                    rerouted += 1
                elif outcome == "":
                    dropped += 1
                elif len(loops) < 20:
                    loops.append(f"link {graph.names[u]}:{pu}-{graph.names[v]}:{pv} down, "
                                 f"lid {tree.lid}: loop {outcome}")
                else:
                    loops.append("...")
    return FailureCheck(failures, rerouted, dropped, loops)


def _walk_with_failure(tree, start: int, dead: set[tuple[int, int]], backup_of, peers
                       ) -> str | None:
    """None: delivered; "": dropped; else the loop as text."""
    seen, x = [], start
    while x != tree.switch:
        if x in seen:
            return " -> ".join(map(str, seen + [x]))
        seen.append(x)
        port = tree.egress[x]
        if (x, port) in dead:
            table = backup_of[x]
            port = (table[tree.lid] if tree.lid < len(table) else 0xFF) \
                if not isinstance(table, dict) else table.get(tree.lid, 0xFF)
            if port == 0xFF or (x, port) in dead:
                return ""
        if port < 0:
            return ""
        x = peers[x].get(port, -1)
        if x < 0:
            return ""
    return None
