"""Building a Fabric node by node: what the generators (topologies/generators.py) and
the net-file reader (topologies/netfile.py) share, and the error both raise."""

from __future__ import annotations

from topologies.description import Fabric, Link, LinkParams, Node, NodeKind

SWITCH_GUID_BASE = 0x0002_C903_0000_0000  # an InfiniBand-like OUI prefix
HOST_GUID_BASE = 0x0002_C903_0010_0000


class TopologyError(ValueError):
    """An unknown topology name or parameters that do not describe a fabric."""


class FabricBuilder:
    """Mininet-like: add switches, hosts and links; ports are allocated in order."""

    def __init__(self, name: str, params: LinkParams) -> None:
        self.name = name
        self.params = params
        self.nodes: list[Node] = []
        self.links: list[Link] = []
        self._next_port: dict[str, int] = {}
        self._switches = 0
        self._hosts = 0

    def add_switch(self, tier: int = 0, guid: int | None = None, label: str = "") -> str:
        self._switches += 1
        n = self._switches
        name = f"s{n}"
        self.nodes.append(Node(name, NodeKind.SWITCH, guid or SWITCH_GUID_BASE + n,
                               device_id=n, tier=tier, label=label))
        self._next_port[name] = 1
        return name

    def add_host(self, guid: int | None = None, label: str = "") -> str:
        self._hosts += 1
        n = self._hosts
        name = f"h{n}"
        self.nodes.append(Node(name, NodeKind.HOST, guid or HOST_GUID_BASE + n, label=label))
        self._next_port[name] = 0
        return name

    def add_link(self, a: str, b: str, a_port: int | None = None,
                 b_port: int | None = None) -> None:
        """Wire a to b; ports default to each node's next free port."""
        if a_port is None:
            a_port = self._next_port[a]
            self._next_port[a] += 1
        if b_port is None:
            b_port = self._next_port[b]
            self._next_port[b] += 1
        self.links.append(Link(a, a_port, b, b_port, self.params))

    def fabric(self) -> Fabric:
        return Fabric(self.name, tuple(self.nodes), tuple(self.links))
