"""Shapes and invariants of the fabric generators."""

from __future__ import annotations

import pytest

from topologies.description import NodeKind
from topologies.generators import TopologyError, build


def _check_invariants(fabric):
    names = [n.name for n in fabric.nodes]
    assert len(names) == len(set(names)), "node names are unique"
    guids = [n.guid for n in fabric.nodes]
    assert len(guids) == len(set(guids)), "GUIDs are unique"
    used = set()
    for link in fabric.links:
        for end in ((link.a, link.a_port), (link.b, link.b_port)):
            assert end not in used, f"port {end} wired twice"
            used.add(end)
    for host in fabric.hosts:
        assert [p for p, _, _ in fabric.neighbours(host.name)] == [0], "a host has one port, 0"
    for sw in fabric.switches:
        ports = [p for p, _, _ in fabric.neighbours(sw.name)]
        assert ports == list(range(1, len(ports) + 1)), "switch ports are numbered from 1"


def test_line_2_is_two_hosts_two_switches():
    fabric = build("line:2")
    assert len(fabric.hosts) == 2 and len(fabric.switches) == 2
    assert fabric.host_switch("h1") == ("s1", 1)
    assert fabric.host_switch("h2") == ("s2", 1)
    assert ("s1", 2) in [(lk.a, lk.a_port) for lk in fabric.links]
    _check_invariants(fabric)


@pytest.mark.parametrize("k", [2, 4, 6])
def test_fattree_counts(k):
    fabric = build(f"fattree:{k}")
    assert len(fabric.hosts) == k**3 // 4
    assert len(fabric.switches) == 5 * k * k // 4
    assert len(fabric.links) == k**3 // 4 * 3  # host links + edge-agg + agg-core
    for sw in fabric.switches:
        assert len(fabric.neighbours(sw.name)) == k, "every fat-tree switch has k ports"
    tiers = sorted({n.tier for n in fabric.switches})
    assert tiers == [0, 1, 2]
    _check_invariants(fabric)


def test_leafspine_every_leaf_reaches_every_spine():
    fabric = build("leafspine:3,2,4")
    leaves = [n for n in fabric.switches if n.tier == 0]
    spines = [n for n in fabric.switches if n.tier == 1]
    assert len(leaves) == 3 and len(spines) == 2 and len(fabric.hosts) == 12
    for leaf in leaves:
        peers = {peer for _, peer, _ in fabric.neighbours(leaf.name)}
        assert {s.name for s in spines} <= peers
    _check_invariants(fabric)


def test_ring_closes():
    fabric = build("ring:4")
    switch_links = [lk for lk in fabric.links
                    if fabric.node(lk.a).kind is NodeKind.SWITCH
                    and fabric.node(lk.b).kind is NodeKind.SWITCH]
    assert len(switch_links) == 4
    _check_invariants(fabric)


@pytest.mark.parametrize("spec, message", [
    ("torus:3", "unknown topology 'torus:3'"),
    ("fattree:3", "k must be an even number"),
    ("line:x", "must be integers"),
    ("leafspine:2,2", "expected 3 integer parameter"),
    ("ring:2", "at least 3 switches"),
])
def test_bad_topology_names_are_explained(spec, message):
    with pytest.raises(TopologyError, match=message):
        build(spec)
