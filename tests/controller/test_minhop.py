"""Min-hop routing on generated fabrics: shortest, complete, balanced, deterministic."""

from __future__ import annotations

import pytest

from controller.lids import LidMap
from controller.routing import engine
from controller.routing.minhop import MinHop
from topologies.description import NodeKind
from topologies.generators import build


def walk(fabric, routes, start_switch: str, dlid: int, lids) -> list[str]:
    """Follow the tables from a switch to the node owning `dlid`; returns the switches crossed."""
    owner = next(n for n, lid in lids.items() if lid == dlid)
    path, node = [], start_switch
    while node != owner:
        assert node not in path, f"loop towards {dlid}: {path + [node]}"
        path.append(node)
        port = routes[node][dlid]
        node = next(peer for p, peer, _ in fabric.neighbours(node) if p == port)
    return path


@pytest.mark.parametrize("spec", ["line:3", "ring:5", "leafspine:3,2,2", "fattree:4"])
def test_every_host_reaches_every_host_on_a_shortest_path(spec):
    fabric = build(spec)
    lids = LidMap().assign(fabric)
    routes = MinHop().route(fabric, lids)
    hosts = [n.name for n in fabric.nodes if n.kind is NodeKind.HOST]
    for src in hosts:
        first_switch, _ = fabric.host_switch(src)
        for dst in hosts:
            if src == dst:
                continue
            path = walk(fabric, routes, first_switch, lids[dst], lids)
            assert len(path) == _switch_hops(fabric, first_switch, fabric.host_switch(dst)[0])


def _switch_hops(fabric, a: str, b: str) -> int:
    seen, frontier, hops = {a}, [a], 1
    while b not in frontier:
        frontier = [p for n in frontier for _, p, _ in fabric.neighbours(n)
                    if p not in seen and fabric.node(p).kind is NodeKind.SWITCH]
        seen.update(frontier)
        hops += 1
    return hops


def test_leaf_spreads_destinations_over_its_uplinks():
    fabric = build("leafspine:2,2,4")
    lids = LidMap().assign(fabric)
    routes = MinHop().route(fabric, lids)
    remote_hosts = [lids[f"h{i}"] for i in range(5, 9)]
    uplinks = [routes["s1"][lid] for lid in remote_hosts]
    assert sorted(uplinks.count(p) for p in set(uplinks)) == [2, 2]


def test_routing_is_deterministic():
    fabric = build("fattree:4")
    lids = LidMap().assign(fabric)
    assert MinHop().route(fabric, lids) == MinHop().route(fabric, lids)


def test_engines_are_found_by_name():
    assert engine("minhop").name == "minhop"
    with pytest.raises(KeyError, match="unknown routing engine"):
        engine("nope")
