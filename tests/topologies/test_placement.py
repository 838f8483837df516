"""Placing a fabric's nodes on servers: cross-server link counts per placement."""

from __future__ import annotations

import pytest

from topologies.description import NodeKind
from topologies.generators import build
from topologies.placement import PlacementError, place

SERVERS = ["srv1", "srv2", "srv3"]


def _switch_links(fabric) -> int:
    return sum(1 for lk in fabric.links
               if fabric.node(lk.a).kind is fabric.node(lk.b).kind is NodeKind.SWITCH)


@pytest.mark.parametrize("how", ["block", "random", "group"])
def test_hosts_run_beside_their_switch_so_no_host_link_crosses(how):
    fabric = build("fattree:4")
    p = place(fabric, SERVERS, how)
    for host in fabric.hosts:
        assert p.node_server[host.name] == p.node_server[fabric.host_switch(host.name)[0]]
    assert all(fabric.node(lk.a).kind is NodeKind.SWITCH is fabric.node(lk.b).kind
               for lk in p.cross_server_links)
    assert set(p.node_server) == {n.name for n in fabric.nodes}


def test_fattree4_on_three_servers_group_keeps_pods_whole():
    fabric = build("fattree:4")
    counts = {how: len(place(fabric, SERVERS, how).cross_server_links)
              for how in ("block", "random", "group")}
    # 32 switch links; block bins the 8 edges, 8 aggregations and 4 cores in order, so
    # nearly every edge-aggregation link crosses; group keeps the 4 pods (16 links)
    # inside servers and only core links cross: 4 cores x 3 links to remote pods.
    assert _switch_links(fabric) == 32
    assert counts == {"block": 28, "random": 21, "group": 12}
    p = place(fabric, SERVERS, "group")
    pods = [  # edges s1..s8 and aggregations s9..s16, two of each per pod
        ("s1", "s2", "s9", "s10"), ("s3", "s4", "s11", "s12"),
        ("s5", "s6", "s13", "s14"), ("s7", "s8", "s15", "s16")]
    for pod in pods:
        assert len({p.node_server[s] for s in pod}) == 1, f"pod {pod} split"
    assert p.switches_per_server(fabric) == {"srv1": 8, "srv2": 6, "srv3": 6}


def test_leafspine_group_places_each_spine_with_a_leaf():
    fabric = build("leafspine:2,2,2")
    assert len(place(fabric, SERVERS, "block").cross_server_links) == 4
    p = place(fabric, SERVERS, "group")
    assert len(p.cross_server_links) == 2
    assert p.switches_per_server(fabric) == {"srv1": 2, "srv2": 2, "srv3": 0}


def test_a_ring_is_cut_into_arcs():
    fabric = build("ring:6")
    assert len(place(fabric, SERVERS, "group").cross_server_links) == 3  # the minimum


def test_random_is_reproducible_by_seed_and_balanced():
    fabric = build("fattree:4")
    a, b = place(fabric, SERVERS, "random", seed=5), place(fabric, SERVERS, "random", seed=5)
    assert a.node_server == b.node_server and a.how == "random (seed 5)"
    assert max(a.switches_per_server(fabric).values()) <= 7


def test_one_server_has_no_crossing_links():
    fabric = build("fattree:4")
    assert place(fabric, ["only"], "group").cross_server_links == ()


def test_bad_placements_are_refused_by_name():
    fabric = build("line:2")
    with pytest.raises(PlacementError, match="placement 'spread'"):
        place(fabric, SERVERS, "spread")
    with pytest.raises(PlacementError, match="at least one server"):
        place(fabric, [], "block")
