"""The fabric as engines see it: switches by index, switch-to-switch ports, hosts by LID.

Built once from a `Fabric` and its LIDs in linear time (the Fabric's own
lookups by name are linear each), so every engine and diagnostic works on
integer indices and lists rather than names.
"""

from __future__ import annotations

from dataclasses import dataclass

from topologies.description import Fabric, NodeKind


@dataclass(frozen=True)
class Attachment:
    """Where a destination LID lives: a host behind a switch port, or a switch itself."""

    name: str
    lid: int
    switch: int  # switch index
    port: int  # the switch's port towards the host; 0 for a switch's own LID


@dataclass
class SwitchGraph:
    names: list[str]  # switch index -> name
    index: dict[str, int]  # name -> switch index
    guids: list[int]
    tiers: list[int]
    # per switch: (own port, peer switch index, peer port) of every switch-to-switch link, by port
    links: list[list[tuple[int, int, int]]]
    hosts: list[Attachment]  # every host with a LID, in LID order
    switch_lids: list[Attachment]  # every switch with a LID, in LID order
    max_lid: int

    @classmethod
    def from_fabric(cls, fabric: Fabric, lids: dict[str, int]) -> SwitchGraph:
        switches = sorted(fabric.switches, key=lambda n: n.device_id or n.guid)
        names = [n.name for n in switches]
        index = {name: i for i, name in enumerate(names)}
        links: list[list[tuple[int, int, int]]] = [[] for _ in names]
        host_at: dict[str, tuple[int, int, int]] = {}  # host -> (host port, switch, switch port)
        for link in fabric.links:
            a, b = index.get(link.a), index.get(link.b)
            if a is not None and b is not None:
                links[a].append((link.a_port, b, link.b_port))
                links[b].append((link.b_port, a, link.a_port))
            elif a is not None:
                _attach(host_at, link.b, link.b_port, a, link.a_port)
            elif b is not None:
                _attach(host_at, link.a, link.a_port, b, link.b_port)
        for ports in links:
            ports.sort()
        kinds = {n.name: n.kind for n in fabric.nodes}
        hosts, switch_lids = [], []
        for name, lid in sorted(lids.items(), key=lambda kv: kv[1]):
            if kinds.get(name) is NodeKind.SWITCH:
                switch_lids.append(Attachment(name, lid, index[name], 0))
            elif name in host_at:
                _host_port, switch, port = host_at[name]
                hosts.append(Attachment(name, lid, switch, port))
        return cls(names, index, [n.guid for n in switches], [n.tier for n in switches],
                   links, hosts, switch_lids, max(lids.values(), default=0))

    @property
    def size(self) -> int:
        return len(self.names)

    def destinations(self) -> list[Attachment]:
        """Every routable LID (hosts and switches), in LID order."""
        return sorted(self.hosts + self.switch_lids, key=lambda a: a.lid)

    def peer(self, switch: int, port: int) -> int | None:
        """The switch behind `port` of `switch` (None: a host port or no link)."""
        for own, peer, _peer_port in self.links[switch]:
            if own == port:
                return peer
        return None

    def bfs(self, roots: list[int]) -> list[int]:
        """Switch-hop distance from the nearest root (-1: unreachable)."""
        dist = [-1] * len(self.names)
        frontier = list(dict.fromkeys(roots))
        for r in frontier:
            dist[r] = 0
        depth = 0
        while frontier:
            depth += 1
            nxt = []
            for node in frontier:
                for _port, peer, _pp in self.links[node]:
                    if dist[peer] < 0:
                        dist[peer] = depth
                        nxt.append(peer)
            frontier = nxt
        return dist


def _attach(host_at: dict, host: str, host_port: int, switch: int, switch_port: int) -> None:
    """A multi-port host is reached through its lowest-numbered port."""
    if host not in host_at or host_port < host_at[host][0]:
        host_at[host] = (host_port, switch, switch_port)
