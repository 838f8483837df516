"""Shared helpers for routing tests: random fabrics, a brute-force path walker."""

from __future__ import annotations

import random

from controller.lids import LidMap
from topologies.description import Fabric, Link, Node, NodeKind
from topologies.generators import build


def random_fabric(seed: int, switches: int, extra_links: int, hosts: int) -> Fabric:
    """A connected random fabric: a random spanning tree plus extra cables (parallel
    cables allowed), hosts on random switches."""
    rng = random.Random(seed)
    nodes = [Node(f"s{i}", NodeKind.SWITCH, 0x1000 + i, device_id=i) for i in range(1, switches + 1)]
    next_port = {n.name: 1 for n in nodes}
    links = []

    def cable(a: str, b: str) -> None:
        links.append(Link(a, next_port[a], b, next_port[b]))
        next_port[a] += 1
        next_port[b] += 1

    names = [n.name for n in nodes]
    for i in range(1, switches):
        cable(names[i], names[rng.randrange(i)])
    for _ in range(extra_links):
        a, b = rng.sample(names, 2) if switches > 1 else (names[0], names[0])
        if a != b:
            cable(a, b)
    for h in range(1, hosts + 1):
        host = Node(f"h{h}", NodeKind.HOST, 0x9000 + h)
        nodes.append(host)
        sw = rng.choice(names)
        links.append(Link(sw, next_port[sw], host.name, 0))
        next_port[sw] += 1
    return Fabric(f"random:{seed}", tuple(nodes), tuple(links))


def fabric_and_lids(spec: str):
    fabric = build(spec)
    return fabric, LidMap().assign(fabric)


def brute_force_paths(fabric: Fabric, routes, lids) -> tuple[list[list[tuple[str, int]]], int]:
    """Every host pair's channel list [(switch, egress port)] by walking the tables
    name by name; and the number of pairs that do not arrive."""
    hosts = [n.name for n in fabric.hosts]
    switches = {n.name for n in fabric.switches}
    neighbours = {name: fabric.neighbours(name) for name in switches}
    paths, lost = [], 0
    for src in hosts:
        first, _ = fabric.host_switch(src)
        for dst in hosts:
            if src == dst:
                continue
            node, channels, seen = first, [], set()
            while True:
                if node in seen:
                    lost += 1
                    break
                seen.add(node)
                port = routes.get(node, {}).get(lids[dst])
                if port is None:
                    lost += 1
                    break
                peer = next((p for own, p, _pp in neighbours[node] if own == port), None)
                if peer == dst:
                    paths.append(channels)
                    break
                if peer not in switches:
                    lost += 1
                    break
                channels.append((node, port))
                node = peer
    return paths, lost


def brute_force_has_cycle(paths: list[list[tuple[str, int]]]) -> bool:
    """Does any channel depend on itself, transitively? (reachability from every channel)"""
    edges: dict = {}
    for path in paths:
        for a, b in zip(path, path[1:]):
            edges.setdefault(a, set()).add(b)
    for start in edges:
        seen, stack = set(), list(edges[start])
        while stack:
            c = stack.pop()
            if c == start:
                return True
            if c not in seen:
                seen.add(c)
                stack.extend(edges.get(c, ()))
    return False
