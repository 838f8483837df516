"""A scenario's `[cluster]` (or `--servers`/`--placement`) turned into servers and a placement.

The placement needs only the server names (`srv1`.. for `ns:N`, the host names
otherwise), so it is made, and reported, before any server exists.
"""

from __future__ import annotations

from topologies.cluster import check_tools
from topologies.description import Fabric
from topologies.ledger import Ledger
from topologies.placement import Placement, place
from topologies.servers import ServerError, ServerSet, make_namespace_servers, parse_servers


def server_names(servers: str) -> list[str]:
    kind, what = parse_servers(servers)
    return [f"srv{i}" for i in range(1, what + 1)] if kind == "namespaces" else list(what)


def plan_placement(fabric: Fabric, cluster, seed: int) -> Placement:
    """`cluster` is a fabriclab.scenario.ClusterSpec."""
    return place(fabric, server_names(cluster.servers), cluster.placement, seed)


def make_servers(cluster, ledger: Ledger) -> ServerSet:
    kind, what = parse_servers(cluster.servers)
    if kind == "namespaces":
        servers = make_namespace_servers(what, ledger)
        try:
            check_tools(servers)
        except BaseException:
            servers.close()
            raise
        return servers
    raise ServerError(
        f"--servers {cluster.servers}: real servers reached by SSH are not supported yet: "
        "the switch, NIC and agent processes need a supervisor on each server that the "
        "run's ledger can reach (docs/cluster.md); `--servers ns:N` runs the same fabric "
        "on namespace servers of this machine")
