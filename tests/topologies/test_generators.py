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


@pytest.mark.parametrize("a, p, h", [(2, 1, 1), (4, 2, 2)])
def test_dragonfly_groups_are_meshes_joined_by_one_global_link_each(a, p, h):
    fabric = build(f"dragonfly:{a},{p},{h}")
    groups = a * h + 1
    assert len(fabric.switches) == groups * a
    assert len(fabric.hosts) == groups * a * p
    switch_links = [lk for lk in fabric.links if lk.a.startswith("s") and lk.b.startswith("s")]
    assert len(switch_links) == groups * a * (a - 1) // 2 + groups * (groups - 1) // 2
    for sw in fabric.switches:
        assert len(fabric.neighbours(sw.name)) == p + (a - 1) + h
    _check_invariants(fabric)


NETFILE = """\
# a two-switch fabric as ibnetdiscover prints it
vendid=0x2c9
switchguid=0x2c90300000101(2c90300000101)
Switch  4 "S-0002c90300000101"   # "leaf one" base port 0 lid 3 lmc 0
[1]     "H-0002c90300000201"[1](2c90300000202)  # "host a" lid 1 4xEDR
[3]     "S-0002c90300000102"[3]  # "leaf two" lid 4 4xEDR

Switch  4 "S-0002c90300000102"   # "leaf two"
[2]     "H-0002c90300000203"[1]
[3]     "S-0002c90300000101"[3]

Ca      2 "H-0002c90300000201"   # "host a"
[1](2c90300000202)  "S-0002c90300000101"[1]

Hca     1 "H-0002c90300000203"
[1]     "S-0002c90300000102"[2]
"""


def test_netfile_import_keeps_wiring_and_guids(tmp_path):
    path = tmp_path / "two.net"
    path.write_text(NETFILE)
    fabric = build(f"netfile:{path}")
    assert [n.label for n in fabric.switches] == ["S-0002c90300000101", "S-0002c90300000102"]
    assert fabric.node("s1").guid == 0x2C90300000101
    assert fabric.node("h1").guid == 0x0002C90300000201
    assert fabric.host_switch("h1") == ("s1", 1)
    assert fabric.host_switch("h2") == ("s2", 2)
    assert ("s1", 3, "s2", 3) in [(lk.a, lk.a_port, lk.b, lk.b_port) for lk in fabric.links]
    assert len(fabric.links) == 3


@pytest.mark.parametrize("text, message", [
    ('Switch 2 "a"\n[1] "b"[1]\n', "'a' port 1 is wired to 'b', which is not declared"),
    ('Switch 2 "a"\n[5] "b"[1]\nSwitch 2 "b"\n', "port 5 of 'a' is outside 1..2"),
    ('Switch 2 "a"\n[1] "b"[1]\nSwitch 2 "b"\n[1] "c"[1]\nSwitch 2 "c"\n',
     "says it reaches 'b'\\[1\\], but line 4"),
    ('Switch 2 "a"\n[1] oops\n', "x.net:2: expected"),
    ("nothing here\n", "x.net:1: not a node"),
    ('Switch 2 "a"\nSwitch 2 "a"\n', "declared twice"),
])
def test_malformed_netfiles_name_file_and_line(tmp_path, text, message):
    path = tmp_path / "x.net"
    path.write_text(text)
    with pytest.raises(TopologyError, match=message):
        build(f"netfile:{path}")


def test_missing_netfile_is_explained():
    with pytest.raises(TopologyError, match="no such file"):
        build("netfile:/nonexistent/fabric.net")
