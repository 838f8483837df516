"""Which server runs which node when one fabric is spread over several servers.

Three placements, each a function of the fabric and the server list only (so a
placement is reproducible and unit-testable without a server):

* `block`: switches in the description's order cut into evenly sized bins, one
  per server: Mininet's own `SwitchBinPlacer` (mininet.examples.cluster).
* `random`: each switch on a server drawn with a seeded generator (the seed is
  reported), every server holding at most its even share.
* `group`: keeps each pod / leaf group together: the groups are what remains
  connected when the top tier (spines, cores) is taken away; groups go to the
  least-loaded server, largest first, and each top-tier switch goes to the
  server it has most links to while that server is under its even share. A
  single-tier fabric (line, ring) is cut into bins along a depth-first walk.

A host always runs on the server of the switch it hangs off: a host link never
crosses servers. The figure to compare placements by is `cross_server_links`,
the links whose two ends run on different servers (each becomes a tunnel).
"""

from __future__ import annotations

import math
import random
from collections import deque
from dataclasses import dataclass

from topologies.description import Fabric, Link, NodeKind

PLACEMENTS = ("block", "random", "group")


class PlacementError(ValueError):
    """A placement that cannot be made (unknown name, no server)."""


@dataclass(frozen=True)
class Placement:
    servers: tuple[str, ...]
    node_server: dict[str, str]  # every node -> the server that runs it
    cross_server_links: tuple[Link, ...]
    how: str  # "group", "block", "random (seed 1)"

    def nodes_on(self, server: str) -> list[str]:
        return [n for n, s in self.node_server.items() if s == server]

    def switches_per_server(self, fabric: Fabric) -> dict[str, int]:
        out = dict.fromkeys(self.servers, 0)
        for sw in fabric.switches:
            out[self.node_server[sw.name]] += 1
        return out


def place(fabric: Fabric, servers: list[str] | tuple[str, ...], how: str = "group",
          seed: int = 1) -> Placement:
    servers = tuple(servers)
    if not servers:
        raise PlacementError("a placement needs at least one server")
    if len(set(servers)) != len(servers):
        raise PlacementError(f"servers named twice: {', '.join(servers)}")
    if how == "block":
        switches = _block(fabric, servers)
        label = "block"
    elif how == "random":
        switches = _random(fabric, servers, seed)
        label = f"random (seed {seed})"
    elif how == "group":
        switches = _group(fabric, servers)
        label = "group"
    else:
        raise PlacementError(f"placement {how!r}: expected one of {', '.join(PLACEMENTS)}")
    node_server = dict(switches)
    for host in fabric.hosts:
        node_server[host.name] = switches[fabric.host_switch(host.name)[0]]
    crossing = tuple(lk for lk in fabric.links if node_server[lk.a] != node_server[lk.b])
    ordered = {n.name: node_server[n.name] for n in fabric.nodes}
    return Placement(servers, ordered, crossing, label)


def _share(fabric: Fabric, servers: tuple[str, ...]) -> int:
    return max(1, math.ceil(len(fabric.switches) / len(servers)))


def _block(fabric: Fabric, servers: tuple[str, ...]) -> dict[str, str]:
    from mininet.examples.cluster import SwitchBinPlacer

    names = [sw.name for sw in fabric.switches]
    return SwitchBinPlacer.bin(names, list(servers))


def _random(fabric: Fabric, servers: tuple[str, ...], seed: int) -> dict[str, str]:
    rng = random.Random(seed)
    share = _share(fabric, servers)
    load = dict.fromkeys(servers, 0)
    out = {}
    for sw in fabric.switches:
        server = rng.choice([s for s in servers if load[s] < share])
        out[sw.name] = server
        load[server] += 1
    return out


def _switch_neighbours(fabric: Fabric, name: str) -> list[str]:
    return [peer for _p, peer, _pp in fabric.neighbours(name)
            if fabric.node(peer).kind is NodeKind.SWITCH]


def _groups(fabric: Fabric, members: set[str]) -> list[list[str]]:
    """Connected components of the switch graph restricted to `members`, in order."""
    seen: set[str] = set()
    groups = []
    for sw in fabric.switches:
        if sw.name not in members or sw.name in seen:
            continue
        group, todo = [], deque([sw.name])
        seen.add(sw.name)
        while todo:
            node = todo.popleft()
            group.append(node)
            for peer in _switch_neighbours(fabric, node):
                if peer in members and peer not in seen:
                    seen.add(peer)
                    todo.append(peer)
        groups.append(group)
    return groups


def _depth_first(fabric: Fabric) -> list[str]:
    seen: set[str] = set()
    walk: list[str] = []
    for sw in fabric.switches:
        todo = [sw.name]
        while todo:
            node = todo.pop()
            if node in seen:
                continue
            seen.add(node)
            walk.append(node)
            todo.extend(reversed(_switch_neighbours(fabric, node)))
    return walk


def _group(fabric: Fabric, servers: tuple[str, ...]) -> dict[str, str]:
    top = max((sw.tier for sw in fabric.switches), default=0)
    if top == 0:  # flat: bins along a depth-first walk keep neighbours together
        from mininet.examples.cluster import SwitchBinPlacer

        return SwitchBinPlacer.bin(_depth_first(fabric), list(servers))
    lower = {sw.name for sw in fabric.switches if sw.tier < top}
    load = dict.fromkeys(servers, 0)
    out: dict[str, str] = {}
    for group in sorted(_groups(fabric, lower), key=len, reverse=True):
        server = min(servers, key=lambda s: (load[s], servers.index(s)))
        out.update(dict.fromkeys(group, server))
        load[server] += len(group)
    share = _share(fabric, servers)
    for sw in fabric.switches:
        if sw.tier != top:
            continue
        links = dict.fromkeys(servers, 0)
        for peer in _switch_neighbours(fabric, sw.name):
            if peer in out:
                links[out[peer]] += 1
        open_ = [s for s in servers if load[s] < share] or list(servers)
        server = max(open_, key=lambda s: (links[s], -load[s], -servers.index(s)))
        out[sw.name] = server
        load[server] += 1
    return out
