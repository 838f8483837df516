"""The one plain description of a fabric that the SM, Mininet and the report share.

A description says which nodes exist, which port of which node is wired to which
port of another, and the properties of every link (rate, delay, buffer). The SM
routes on it, Mininet builds it, the report draws it.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


class NodeKind(enum.Enum):
    HOST = "host"
    SWITCH = "switch"


@dataclass(frozen=True)
class LinkParams:
    """Emulated link properties, enforced by the switch port scheduler and the NIC."""

    rate_pps: int = 2000  # packets per second (scaled-down emulation rate)
    delay_us: int = 0  # one-way propagation delay
    buffer_pkts: int = 64  # egress queue depth in packets


@dataclass(frozen=True)
class Node:
    name: str  # "s1", "h1": also the Mininet node name
    kind: NodeKind
    guid: int  # 64-bit globally unique id, as InfiniBand node GUIDs
    device_id: int = 0  # P4Runtime device id (switches)
    tier: int = 0  # 0 = leaf/edge, increasing towards the core (fat trees)
    label: str = ""  # the name a net-file gave the node, for reports


@dataclass(frozen=True)
class Link:
    a: str
    a_port: int  # port number on node a (host ports are 0)
    b: str
    b_port: int
    params: LinkParams = LinkParams()

    def endpoint(self, node: str) -> tuple[int, str, int]:
        """(own port, peer name, peer port) seen from `node`."""
        if node == self.a:
            return self.a_port, self.b, self.b_port
        if node == self.b:
            return self.b_port, self.a, self.a_port
        raise KeyError(f"link {self} does not touch {node}")


@dataclass(frozen=True)
class Fabric:
    name: str  # e.g. "line:2"
    nodes: tuple[Node, ...]
    links: tuple[Link, ...]
    extra: dict = field(default_factory=dict, compare=False, hash=False)

    @property
    def hosts(self) -> list[Node]:
        return [n for n in self.nodes if n.kind is NodeKind.HOST]

    @property
    def switches(self) -> list[Node]:
        return [n for n in self.nodes if n.kind is NodeKind.SWITCH]

    def node(self, name: str) -> Node:
        try:
            return self._index()[0][name]
        except KeyError:
            raise KeyError(f"no node named {name!r} in fabric {self.name}") from None

    def links_of(self, name: str) -> list[Link]:
        return list(self._index()[1].get(name, ()))

    def _index(self) -> tuple[dict[str, Node], dict[str, list[Link]]]:
        """Nodes by name and links by node, built once (the fabric is frozen)."""
        cached = self.__dict__.get("_index_cache")
        if cached is None:
            by_node: dict[str, list[Link]] = {}
            for lk in self.links:
                by_node.setdefault(lk.a, []).append(lk)
                if lk.b != lk.a:
                    by_node.setdefault(lk.b, []).append(lk)
            cached = ({n.name: n for n in self.nodes}, by_node)
            object.__setattr__(self, "_index_cache", cached)  # not a field: replace() drops it
        return cached

    def neighbours(self, name: str) -> list[tuple[int, str, int]]:
        """(own port, peer, peer port) for every link of `name`, by own port."""
        return sorted(lk.endpoint(name) for lk in self.links_of(name))

    def host_switch(self, host: str) -> tuple[str, int]:
        """(switch, switch port) a host is attached to."""
        for _port, peer, peer_port in self.neighbours(host):
            return peer, peer_port
        raise KeyError(f"host {host} is not attached to any switch")
