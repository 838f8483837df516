"""Min-hop routing, balanced: every switch forwards on a shortest path to each LID.

Among the ports that lie on a shortest path, a switch picks the one that
carries the fewest destinations so far (ties: lowest port), destinations taken
in LID order, as OpenSM's minhop does; so the result is deterministic and
spreads destinations over parallel shortest paths. Min-hop alone is not
deadlock-free on every topology (a ring is the classic counterexample); the
deadlock check and VL assignment are separate diagnostics.
"""

from __future__ import annotations

from collections import deque

from controller.routing import Routes
from topologies.description import Fabric, NodeKind


class MinHop:
    name = "minhop"

    def route(self, fabric: Fabric, lids: dict[str, int]) -> Routes:
        switch_names = {n.name for n in fabric.switches}
        # switch -> [(own port, neighbour switch)], hosts -> (switch, port)
        adjacency: dict[str, list[tuple[int, str]]] = {s: [] for s in switch_names}
        host_at: dict[str, tuple[str, int]] = {}
        for link in fabric.links:
            a_sw, b_sw = link.a in switch_names, link.b in switch_names
            if a_sw and b_sw:
                adjacency[link.a].append((link.a_port, link.b))
                adjacency[link.b].append((link.b_port, link.a))
            elif a_sw:
                host_at[link.b] = (link.a, link.a_port)
            elif b_sw:
                host_at[link.a] = (link.b, link.b_port)
        for ports in adjacency.values():
            ports.sort()

        routes: Routes = {s: {} for s in sorted(switch_names)}
        load: dict[tuple[str, int], int] = {}
        distances: dict[str, dict[str, int]] = {}
        for target, dlid in sorted(lids.items(), key=lambda kv: kv[1]):
            node = fabric.node(target)
            if node.kind is NodeKind.HOST:
                if target not in host_at:
                    continue
                root, root_port = host_at[target]
                routes[root][dlid] = root_port
            else:
                root = target
            if root not in distances:
                distances[root] = _bfs(adjacency, root)
            dist = distances[root]
            for switch in routes:
                if switch == root or switch not in dist:
                    continue  # the root itself (host port set above) or unreachable
                best = None
                for port, peer in adjacency[switch]:
                    if dist.get(peer) == dist[switch] - 1:
                        key = (load.get((switch, port), 0), port)
                        if best is None or key < best:
                            best = key
                port = best[1]
                routes[switch][dlid] = port
                load[(switch, port)] = load.get((switch, port), 0) + 1
        return routes


def _bfs(adjacency: dict[str, list[tuple[int, str]]], root: str) -> dict[str, int]:
    dist = {root: 0}
    frontier = deque([root])
    while frontier:
        node = frontier.popleft()
        for _port, peer in adjacency[node]:
            if peer not in dist:
                dist[peer] = dist[node] + 1
                frontier.append(peer)
    return dist
