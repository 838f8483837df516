"""Min-hop routing, balanced: every switch forwards on a shortest path to each LID.

Among the ports that lie on a shortest path, a switch picks the one that
carries the fewest destinations so far (ties: lowest port), destinations taken
in LID order, as OpenSM's minhop does; so the result is deterministic and
spreads destinations over parallel shortest paths. Min-hop alone is not
deadlock-free on every topology (a ring is the classic counterexample); the
deadlock check and VL assignment are separate diagnostics
(`controller/routing/diagnostics.py`).
"""

from __future__ import annotations

from controller.routing.balancing import route_on_graph
from controller.routing.graph import SwitchGraph
from controller.routing.tables import Routes
from topologies.description import Fabric


class MinHop:
    name = "minhop"

    def route(self, fabric: Fabric, lids: dict[str, int]) -> Routes:
        graph = SwitchGraph.from_fabric(fabric, lids)
        return route_on_graph(graph, lambda root: shortest_path_ports(graph, root))


def shortest_path_ports(graph: SwitchGraph, root: int) -> list[list[int]]:
    """Per switch, the ports on a shortest path to `root` (empty: root or unreachable)."""
    dist = graph.bfs([root])
    return [[port for port, peer, _pp in graph.links[s] if dist[s] > 0 and dist[peer] == dist[s] - 1]
            for s in range(graph.size)]
