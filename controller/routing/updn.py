"""Up*/down* routing: shortest legal paths, deadlock-free on any topology.

Every switch gets a rank, its BFS distance from the root set; a hop towards a
lower (rank, GUID) is "up", the other way "down". A legal path takes zero or
more up hops and then only down hops, so no path ever turns from down to up
and the channel dependency graph has no cycle (Schroeder et al., Autonet).

Roots: the switches of the highest tier when the fabric declares tiers (a fat
tree's cores, a leaf-spine's spines, what one would list in OpenSM's root GUID
file), else the switch with the most switch-to-switch links (lowest GUID on a
tie), OpenSM's fallback being the same idea. A component the roots do not
reach gets its own most-connected root.

Per destination switch, a backward BFS labels every switch with its legal
distance and whether its path starts going down (then it may only continue
down) or up; a switch that can reach the destination at the same distance
both ways is labelled down. The next hop of a down switch is a down neighbour
labelled down, of an up switch any up neighbour one step closer, so every
forwarding path is legal whatever the tables of other destinations say.
Among equal next hops the least-loaded port wins (balancing.py).
"""

from __future__ import annotations

from controller.routing.balancing import route_on_graph
from controller.routing.graph import SwitchGraph
from controller.routing.tables import Routes
from topologies.description import Fabric

DOWN, UP = 0, 1


class UpDown:
    deadlock_free = True  # by construction: the SM skips the cycle check
    name = "updn"

    def route(self, fabric: Fabric, lids: dict[str, int]) -> Routes:
        graph = SwitchGraph.from_fabric(fabric, lids)
        order = updown_order(graph)
        return route_on_graph(graph, lambda root: updown_ports(graph, order, root))


def choose_roots(graph: SwitchGraph) -> list[int]:
    """The top tier if tiers differ, else the most connected switch."""
    if graph.size == 0:
        return []
    top = max(graph.tiers)
    if top != min(graph.tiers):
        return [s for s in range(graph.size) if graph.tiers[s] == top]
    return [min(range(graph.size), key=lambda s: (-len(graph.links[s]), graph.guids[s]))]


def updown_order(graph: SwitchGraph) -> list[tuple[int, int]]:
    """(rank, GUID) per switch: a hop to a smaller key is up."""
    rank = graph.bfs(choose_roots(graph))
    while -1 in rank:  # a component the roots do not reach
        rest = [s for s in range(graph.size) if rank[s] < 0]
        root = min(rest, key=lambda s: (-len(graph.links[s]), graph.guids[s]))
        extra = graph.bfs([root])
        for s in rest:
            if extra[s] >= 0:
                rank[s] = extra[s]
    return [(rank[s], graph.guids[s]) for s in range(graph.size)]


def updown_ports(graph: SwitchGraph, order: list[tuple[int, int]], root: int) -> list[list[int]]:
    """Per switch, its legal next-hop ports on a shortest up*/down* path to `root`."""
    n = graph.size
    dist = [-1] * n
    state = [DOWN] * n
    dist[root] = 0
    frontier = [root]
    depth = 0
    while frontier:
        depth += 1
        reached: dict[int, int] = {}
        for x in frontier:
            x_key, x_down = order[x], state[x] == DOWN
            for _port, u, _pp in graph.links[x]:
                if dist[u] >= 0:
                    continue
                if order[u] < x_key:  # u -> x goes down: legal only if x continues down
                    if x_down:
                        reached[u] = DOWN
                else:  # u -> x goes up: legal whatever x does next
                    reached.setdefault(u, UP)
        for u, st in reached.items():
            dist[u], state[u] = depth, st
        frontier = list(reached)
    ports: list[list[int]] = []
    for s in range(n):
        d = dist[s]
        if d <= 0:
            ports.append([])
            continue
        key = order[s]
        if state[s] == DOWN:
            ports.append([p for p, v, _pp in graph.links[s]
                          if dist[v] == d - 1 and state[v] == DOWN and order[v] > key])
        else:
            ports.append([p for p, v, _pp in graph.links[s]
                          if dist[v] == d - 1 and order[v] < key])
    return ports
