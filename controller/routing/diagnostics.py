"""Diagnostics on any engine's output: reachability, path lengths, link load, deadlock.

Everything is computed per destination host from the forwarding tables alone:
the tables towards one destination form an in-tree over the switches (or
expose a loop or a hole), so one pass over the switches per destination gives

* which source hosts reach it (unreachable pairs, with a reason for the first few),
* the path length of every pair (in switches crossed: a histogram),
* the all-to-all load of every switch-to-switch channel (how many host pairs
  cross it), max and mean over the channels, and
* the channel dependency graph (CDG): a packet for that destination holding
  channel u->s waits for channel s->next(s). Only dependencies on paths some
  host actually sends on are kept.

A routing is deadlock-free on a VL when the CDG of the paths on that VL has no
cycle (Dally and Seitz). `assign_vls` layers destinations onto VLs, each on the
lowest VL where its in-tree adds no cycle: a destination-based layering, since
the address book gives each destination host one SL (hence one VL).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from controller.routing.graph import SwitchGraph

Channel = tuple[int, int]  # (switch index, egress port) of a switch-to-switch link
# data VLs fabric.p4 classifies, for offline routing; the SM passes the pushed program's
# NUM_CLASSES (controller/program_constants.py)
MAX_VLS = 8


class VlLayeringError(Exception):
    """The cycles cannot be broken with the VLs available."""


@dataclass
class DestinationTree:
    """The forwarding towards one destination host."""

    lid: int
    switch: int  # the switch the host hangs off
    next_switch: list[int]  # per switch: next switch (-1 delivers or none, see `reaches`)
    reaches: list[bool]  # per switch: forwarding from here delivers to the host
    sources: list[int]  # per switch: source hosts whose packets cross it (incl. its own)
    depth: list[int]  # per switch: switches crossed from here to the host, incl. itself
    egress: list[int]  # per switch: the port used


@dataclass
class RoutingReport:
    hosts: int
    switches: int
    unreachable_pairs: int = 0
    unreachable_examples: list[str] = field(default_factory=list)
    path_length_histogram: dict[int, int] = field(default_factory=dict)
    channel_load: dict[Channel, int] = field(default_factory=dict)
    dependencies: set[tuple[Channel, Channel]] = field(default_factory=set)

    @property
    def max_link_load(self) -> int:
        return max(self.channel_load.values(), default=0)

    @property
    def mean_link_load(self) -> float:
        return sum(self.channel_load.values()) / len(self.channel_load) if self.channel_load else 0.0


def _port_maps(graph: SwitchGraph) -> list[dict[int, int]]:
    return [{port: peer for port, peer, _pp in links} for links in graph.links]


def _ports_array(routes: Mapping[str, Mapping[int, int]], graph: SwitchGraph):
    """Per switch index, a fast `lid -> port` lookup (bytearray or dict)."""
    out = []
    for name in graph.names:
        table = routes.get(name, {})
        out.append(getattr(table, "ports", None) or dict(table))
    return out


def _lookup(table, lid: int) -> int:
    if isinstance(table, dict):
        return table.get(lid, -1)
    port = table[lid] if lid < len(table) else 0xFF
    return -1 if port == 0xFF else port


def destination_trees(graph: SwitchGraph, routes: Mapping[str, Mapping[int, int]]):
    """Yield a DestinationTree per destination host, in LID order."""
    peers = _port_maps(graph)
    tables = _ports_array(routes, graph)
    hosts_at = [0] * graph.size
    for h in graph.hosts:
        hosts_at[h.switch] += 1
    n = graph.size
    for dest in graph.hosts:
        lid = dest.lid
        egress = [_lookup(tables[s], lid) for s in range(n)]
        nxt = [-1] * n
        for s in range(n):
            if s != dest.switch and egress[s] >= 0:
                nxt[s] = peers[s].get(egress[s], -1)
        # reachability and depth: walk each switch's chain once (-2 marks the current chain)
        depth = [0] * n  # 0 unknown, -1 does not reach, > 0 switches crossed
        depth[dest.switch] = 1 if egress[dest.switch] == dest.port else -1
        for s in range(n):
            chain, x = [], s
            while x >= 0 and depth[x] == 0:
                depth[x] = -2
                chain.append(x)
                x = nxt[x]
            base = depth[x] if x >= 0 and depth[x] > 0 else -1  # a hole or a loop: -1
            for y in reversed(chain):
                base = base + 1 if base > 0 else -1
                depth[y] = base
        reaches = [d > 0 for d in depth]
        # sources crossing each switch: accumulate from the farthest switches inwards
        sources = [hosts_at[s] if reaches[s] else 0 for s in range(n)]
        sources[dest.switch] -= 1  # the destination does not send to itself
        for s in sorted((s for s in range(n) if reaches[s]), key=depth.__getitem__, reverse=True):
            if s != dest.switch:
                sources[nxt[s]] += sources[s]
        yield DestinationTree(lid, dest.switch, nxt, reaches, sources, depth, egress)


def analyse(graph: SwitchGraph, routes: Mapping[str, Mapping[int, int]],
            dependencies: bool = True) -> RoutingReport:
    """Reachability, path lengths, all-to-all channel load and (optionally) the CDG."""
    report = RoutingReport(len(graph.hosts), graph.size)
    hosts_at = [0] * graph.size
    for h in graph.hosts:
        hosts_at[h.switch] += 1
    load = report.channel_load
    for s, links in enumerate(graph.links):
        for port, _peer, _pp in links:
            load[(s, port)] = 0
    histogram = report.path_length_histogram
    deps = report.dependencies
    for tree in destination_trees(graph, routes):
        for s in range(graph.size):
            senders = hosts_at[s] - (s == tree.switch)
            if not senders:
                continue
            if tree.reaches[s]:
                histogram[tree.depth[s]] = histogram.get(tree.depth[s], 0) + senders
            else:
                report.unreachable_pairs += senders
                if len(report.unreachable_examples) < 5:
                    report.unreachable_examples.append(
                        f"{graph.names[s]} -> lid {tree.lid}: " + _why(graph, tree, s))
        for s in range(graph.size):
            if tree.sources[s] and tree.reaches[s] and tree.next_switch[s] >= 0:
                channel = (s, tree.egress[s])
                load[channel] += tree.sources[s]
                if dependencies:
                    nxt = tree.next_switch[s]
                    if tree.next_switch[nxt] >= 0:
                        deps.add((channel, (nxt, tree.egress[nxt])))
    report.path_length_histogram = dict(sorted(histogram.items()))
    return report


def _why(graph: SwitchGraph, tree: DestinationTree, s: int) -> str:
    seen, x = [], s
    while x >= 0 and x not in seen:
        seen.append(x)
        if tree.egress[x] < 0:
            return f"no route at {graph.names[x]}"
        x = tree.next_switch[x]
    if x >= 0:
        return "forwarding loop " + " -> ".join(graph.names[y] for y in seen + [x])
    return f"port {tree.egress[seen[-1]]} of {graph.names[seen[-1]]} leads nowhere"


# ------------------------------------------------------------------ deadlock

def find_cycle(edges: set[tuple[Channel, Channel]] | list[tuple[Channel, Channel]]
               ) -> list[Channel] | None:
    """One cycle of the dependency graph (as a channel list), or None: iterative DFS."""
    adjacency: dict[Channel, list[Channel]] = {}
    for a, b in edges:
        adjacency.setdefault(a, []).append(b)
        adjacency.setdefault(b, [])
    color = dict.fromkeys(adjacency, 0)  # 0 new, 1 on stack, 2 done
    for start in adjacency:
        if color[start]:
            continue
        stack = [(start, iter(adjacency[start]))]
        color[start] = 1
        path = [start]
        while stack:
            node, children = stack[-1]
            for child in children:
                if color[child] == 1:
                    return path[path.index(child):]
                if color[child] == 0:
                    color[child] = 1
                    path.append(child)
                    stack.append((child, iter(adjacency[child])))
                    break
            else:
                color[node] = 2
                stack.pop()
                path.pop()
    return None


def describe_cycle(graph: SwitchGraph, cycle: list[Channel]) -> str:
    return " -> ".join(f"{graph.names[s]}:{p}" for s, p in cycle)


def tree_dependencies(tree: DestinationTree) -> list[tuple[Channel, Channel]]:
    """CDG edges of one destination's in-tree (only where some host sends)."""
    edges = []
    for s, nxt in enumerate(tree.next_switch):
        if nxt >= 0 and tree.sources[s] and tree.reaches[s] and tree.next_switch[nxt] >= 0:
            edges.append(((s, tree.egress[s]), (nxt, tree.egress[nxt])))
    return edges


def assign_vls(graph: SwitchGraph, routes: Mapping[str, Mapping[int, int]],
               max_vls: int = MAX_VLS) -> dict[int, int]:
    """dlid -> VL: each destination on the lowest VL where its dependencies add no cycle.

    Raises VlLayeringError when a destination fits on none of `max_vls` VLs.
    """
    layers: list[dict[Channel, set[Channel]]] = []
    vl_of: dict[int, int] = {}
    for tree in destination_trees(graph, routes):
        edges = tree_dependencies(tree)
        for vl in range(max_vls):
            if vl == len(layers):
                layers.append({})
            if _adds_no_cycle(layers[vl], edges):
                vl_of[tree.lid] = vl
                break
        else:
            raise VlLayeringError(f"destination lid {tree.lid} adds a cycle on every one of "
                                  f"the {max_vls} VLs")
    return vl_of


def _adds_no_cycle(layer: dict[Channel, set[Channel]],
                   edges: list[tuple[Channel, Channel]]) -> bool:
    """Add `edges` to `layer` if the layer stays acyclic; report whether they were added."""
    added = []
    for a, b in edges:
        if b in layer.get(a, ()):
            continue
        if _reaches(layer, b, a):
            for x, y in added:
                layer[x].discard(y)
            return False
        layer.setdefault(a, set()).add(b)
        added.append((a, b))
    return True


def _reaches(layer: dict[Channel, set[Channel]], start: Channel, goal: Channel) -> bool:
    if start == goal:
        return True
    seen, stack = {start}, [start]
    while stack:
        for nxt in layer.get(stack.pop(), ()):
            if nxt == goal:
                return True
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return False


def deadlock_free(graph: SwitchGraph, routes: Mapping[str, Mapping[int, int]],
                  vl_of: Mapping[int, int] | None = None) -> tuple[bool, str]:
    """(no cycle on any VL, a description of one cycle if there is one)."""
    per_vl: dict[int, list[tuple[Channel, Channel]]] = {}
    for tree in destination_trees(graph, routes):
        vl = vl_of.get(tree.lid, 0) if vl_of else 0
        per_vl.setdefault(vl, []).extend(tree_dependencies(tree))
    for vl, edges in sorted(per_vl.items()):
        cycle = find_cycle(edges)
        if cycle:
            return False, f"VL {vl}: {describe_cycle(graph, cycle)}"
    return True, ""
