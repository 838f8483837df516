"""Parametrised fabric generators: `line:N`, `ring:N`, `leafspine:L,S,H`, `fattree:K`,
`dragonfly:A,P,H`, and `netfile:PATH` (an ibnetdiscover / ibsim net-file).

Every generator returns a `Fabric`. Conventions shared by all of them:
switches are `s1..sN` (device id = N), hosts `h1..hM`; a host's only port is 0;
switch ports are numbered from 1 in the order the generator wires them, hosts
first, then links towards higher tiers.
"""

from __future__ import annotations

from collections.abc import Callable

from topologies.builder import FabricBuilder as _Builder
from topologies.builder import TopologyError
from topologies.description import Fabric, LinkParams

__all__ = ["TopologyError", "available", "build"]


def _ints(name: str, args: str, count: int, minimum: int = 1) -> list[int]:
    parts = [p for p in args.split(",") if p.strip()] if args else []
    if len(parts) != count:
        raise TopologyError(f"{name}: expected {count} integer parameter(s), got {args!r}")
    try:
        values = [int(p) for p in parts]
    except ValueError as exc:
        raise TopologyError(f"{name}: parameters must be integers, got {args!r}") from exc
    for v in values:
        if v < minimum:
            raise TopologyError(f"{name}: parameters must be >= {minimum}, got {v}")
    return values


def line(n: int, params: LinkParams) -> Fabric:
    """N switches in a chain, one host on each."""
    b = _Builder(f"line:{n}", params)
    switches = [b.add_switch() for _ in range(n)]
    for s in switches:
        b.add_link(s, b.add_host())
    for left, right in zip(switches, switches[1:], strict=False):
        b.add_link(left, right)
    return b.fabric()


def ring(n: int, params: LinkParams) -> Fabric:
    """N switches in a ring, one host on each: the classic cyclic-dependency fabric."""
    if n < 3:
        raise TopologyError(f"ring:{n}: a ring needs at least 3 switches")
    b = _Builder(f"ring:{n}", params)
    switches = [b.add_switch() for _ in range(n)]
    for s in switches:
        b.add_link(s, b.add_host())
    for i, s in enumerate(switches):
        b.add_link(s, switches[(i + 1) % n])
    return b.fabric()


def leafspine(leaves: int, spines: int, hosts_per_leaf: int, params: LinkParams) -> Fabric:
    """Two-tier Clos: every leaf wired to every spine."""
    b = _Builder(f"leafspine:{leaves},{spines},{hosts_per_leaf}", params)
    leaf_names = [b.add_switch(tier=0) for _ in range(leaves)]
    spine_names = [b.add_switch(tier=1) for _ in range(spines)]
    for leaf in leaf_names:
        for _ in range(hosts_per_leaf):
            b.add_link(leaf, b.add_host())
    for leaf in leaf_names:
        for spine in spine_names:
            b.add_link(leaf, spine)
    return b.fabric()


def fattree(k: int, params: LinkParams) -> Fabric:
    """k-ary three-tier fat tree: k pods of k/2 edge + k/2 aggregation, (k/2)^2 cores."""
    if k < 2 or k % 2:
        raise TopologyError(f"fattree:{k}: k must be an even number >= 2")
    half = k // 2
    b = _Builder(f"fattree:{k}", params)
    edges = [[b.add_switch(tier=0) for _ in range(half)] for _ in range(k)]
    aggs = [[b.add_switch(tier=1) for _ in range(half)] for _ in range(k)]
    cores = [b.add_switch(tier=2) for _ in range(half * half)]
    for pod in range(k):
        for e in edges[pod]:
            for _ in range(half):
                b.add_link(e, b.add_host())
    for pod in range(k):
        for e in edges[pod]:
            for a in aggs[pod]:
                b.add_link(e, a)
    for pod in range(k):
        for i, a in enumerate(aggs[pod]):
            for j in range(half):
                b.add_link(a, cores[i * half + j])
    return b.fabric()


def dragonfly(a: int, p: int, h: int, params: LinkParams) -> Fabric:
    """Dragonfly with g = a*h + 1 groups of `a` routers (full mesh inside a group),
    `p` hosts and `h` global links per router, one global link between every two groups."""
    if a < 1 or h < 1:
        raise TopologyError(f"dragonfly:{a},{p},{h}: a and h must be >= 1")
    groups = a * h + 1
    b = _Builder(f"dragonfly:{a},{p},{h}", params)
    routers = [[b.add_switch(tier=0) for _ in range(a)] for _ in range(groups)]
    for group in routers:
        for r in group:
            for _ in range(p):
                b.add_link(r, b.add_host())
    for group in routers:
        for i, r in enumerate(group):
            for r2 in group[i + 1:]:
                b.add_link(r, r2)

    def gateway(src: int, dst: int) -> str:
        """The router of group `src` that holds the global link to group `dst`."""
        return routers[src][((dst - src) % groups - 1) // h]

    for g1 in range(groups):
        for g2 in range(g1 + 1, groups):
            b.add_link(gateway(g1, g2), gateway(g2, g1))
    return b.fabric()


_GENERATORS: dict[str, tuple[int, Callable[..., Fabric], str]] = {
    "line": (1, line, "line:N — N switches in a chain, a host on each"),
    "ring": (1, ring, "ring:N — N switches in a ring, a host on each"),
    "leafspine": (3, leafspine, "leafspine:LEAVES,SPINES,HOSTS_PER_LEAF — two-tier Clos"),
    "fattree": (1, fattree, "fattree:K — k-ary three-tier fat tree (K even)"),
    "dragonfly": (3, dragonfly, "dragonfly:A,P,H — A routers/group, P hosts/router, "
                                "H global links/router, A*H+1 groups"),
}


def available() -> dict[str, str]:
    """Generator name -> one-line usage."""
    usages = {name: usage for name, (_n, _f, usage) in _GENERATORS.items()}
    usages["netfile"] = "netfile:PATH — an ibnetdiscover or ibsim net-file"
    return usages


def build(spec: str, params: LinkParams | None = None) -> Fabric:
    """Build a fabric from a name like `fattree:4` or `leafspine:2,2,2`."""
    kind, _, args = spec.partition(":")
    if kind == "netfile":
        from topologies.netfile import load_netfile

        return load_netfile(args, params or LinkParams())
    if kind not in _GENERATORS:
        known = ", ".join(sorted([*_GENERATORS, "netfile"]))
        raise TopologyError(f"unknown topology {spec!r}: known generators are {known}")
    count, func, _usage = _GENERATORS[kind]
    return func(*_ints(kind, args, count), params or LinkParams())
