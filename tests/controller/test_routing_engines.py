"""Routing engines on generated and random fabrics: complete, legal, deadlock-free where promised."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from routing_fabrics import brute_force_has_cycle, brute_force_paths, fabric_and_lids, random_fabric

from controller.lids import LidMap
from controller.routing import RoutingError, engine
from controller.routing.diagnostics import analyse, assign_vls, deadlock_free
from controller.routing.ftree import FatTree
from controller.routing.graph import SwitchGraph
from controller.routing.tables import ForwardingTable

ANY_TOPOLOGY = ["line:4", "ring:5", "ring:8", "leafspine:3,2,2", "fattree:4", "fattree:6",
                "dragonfly:2,2,1", "dragonfly:3,1,1"]
FAT_TREES = ["leafspine:4,3,2", "fattree:4", "fattree:6", "fattree:8"]
FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _report(spec: str, name: str):
    fabric, lids = fabric_and_lids(spec)
    graph = SwitchGraph.from_fabric(fabric, lids)
    routes = engine(name).route(fabric, lids)
    return graph, routes, analyse(graph, routes)


@pytest.mark.parametrize("spec", ANY_TOPOLOGY)
@pytest.mark.parametrize("name", ["minhop", "updn"])
def test_every_host_pair_is_reachable_on_any_topology(spec, name):
    _graph, _routes, report = _report(spec, name)
    assert report.unreachable_pairs == 0, report.unreachable_examples


@pytest.mark.parametrize("spec", FAT_TREES)
def test_ftree_reaches_every_pair_on_shortest_paths(spec):
    _g, _r, ftree = _report(spec, "ftree")
    _g, _r, minhop = _report(spec, "minhop")
    assert ftree.unreachable_pairs == 0
    assert ftree.path_length_histogram == minhop.path_length_histogram


@pytest.mark.parametrize("spec", ANY_TOPOLOGY)
def test_updn_is_deadlock_free_on_any_topology(spec):
    graph, routes, _ = _report(spec, "updn")
    assert deadlock_free(graph, routes) == (True, "")


@pytest.mark.parametrize("spec", FAT_TREES)
def test_ftree_is_deadlock_free_on_one_vl(spec):
    graph, routes, _ = _report(spec, "ftree")
    assert deadlock_free(graph, routes) == (True, "")
    assert set(assign_vls(graph, routes).values()) == {0}


@pytest.mark.parametrize("k", [4, 8])
def test_ftree_balances_the_fat_tree_perfectly(k):
    """d-mod-k: every leaf up-port and every core carries the same number of destinations,
    and the all-to-all load is lower than min-hop's greedy balancing."""
    fabric, lids = fabric_and_lids(f"fattree:{k}")
    routes = FatTree().route(fabric, lids)
    half = k // 2
    leaf = "s1"  # first edge switch: hosts on ports 1..k/2, up-ports after
    ups = [routes[leaf][lid] for h, lid in lids.items() if h.startswith("h")
           and fabric.host_switch(h)[0] != leaf]
    assert sorted(set(ups)) == list(range(half + 1, k + 1))
    assert {ups.count(p) for p in set(ups)} == {len(ups) // half}
    # every core is the top of the same number of destinations' routes
    tops = {n.name: 0 for n in fabric.switches if n.tier == 2}
    for host in fabric.hosts:
        pod = (int(fabric.host_switch(host.name)[0][1:]) - 1) // half
        node = f"s{(pod + 1) % k * half + 1}"  # an edge switch of the next pod
        while node not in tops and node != fabric.host_switch(host.name)[0]:
            port = routes[node][lids[host.name]]
            node = next(peer for own, peer, _ in fabric.neighbours(node) if own == port)
        if node in tops:
            tops[node] += 1
    assert set(tops.values()) == {sum(tops.values()) // len(tops)}
    _g, _r, ftree = _report(f"fattree:{k}", "ftree")
    _g, _r, minhop = _report(f"fattree:{k}", "minhop")
    assert ftree.max_link_load < minhop.max_link_load
    assert ftree.mean_link_load == minhop.mean_link_load  # same (shortest) path lengths


@pytest.mark.parametrize("spec", ["ring:4", "ring:5", "dragonfly:2,2,1"])
def test_ftree_refuses_what_is_not_a_fat_tree(spec):
    fabric, lids = fabric_and_lids(spec)
    with pytest.raises(RoutingError, match="not a fat tree"):
        FatTree().route(fabric, lids)


def test_min_hop_on_a_triangle_has_no_cycle_but_from_four_switches_on_it_does():
    for n, cyclic in [(3, False), (4, True), (5, True), (7, True)]:
        graph, routes, _ = _report(f"ring:{n}", "minhop")
        ok, cycle = deadlock_free(graph, routes)
        assert ok is not cyclic, (n, cycle)


@pytest.mark.parametrize("n", [4, 5, 6, 9])
def test_vl_assignment_breaks_the_ring_cycle_with_two_vls(n):
    graph, routes, _ = _report(f"ring:{n}", "minhop")
    vls = assign_vls(graph, routes)
    assert max(vls.values()) + 1 == 2
    assert deadlock_free(graph, routes, vls) == (True, "")


@FAST
@given(seed=st.integers(0, 10**6), switches=st.integers(1, 9), extra=st.integers(0, 8),
       hosts=st.integers(2, 10))
def test_updn_on_random_fabrics_reaches_every_pair_without_deadlock(seed, switches, extra, hosts):
    fabric = random_fabric(seed, switches, extra, hosts)
    lids = LidMap().assign(fabric)
    graph = SwitchGraph.from_fabric(fabric, lids)
    routes = engine("updn").route(fabric, lids)
    assert analyse(graph, routes).unreachable_pairs == 0
    assert deadlock_free(graph, routes)[0]
    paths, lost = brute_force_paths(fabric, routes, lids)
    assert lost == 0 and not brute_force_has_cycle(paths)


@FAST
@given(seed=st.integers(0, 10**6), switches=st.integers(1, 8), extra=st.integers(0, 8),
       hosts=st.integers(2, 8))
def test_deadlock_check_agrees_with_brute_force_cycle_search(seed, switches, extra, hosts):
    fabric = random_fabric(seed, switches, extra, hosts)
    lids = LidMap().assign(fabric)
    graph = SwitchGraph.from_fabric(fabric, lids)
    routes = engine("minhop").route(fabric, lids)
    paths, lost = brute_force_paths(fabric, routes, lids)
    assert lost == analyse(graph, routes).unreachable_pairs == 0
    ok, _cycle = deadlock_free(graph, routes)
    assert ok is not brute_force_has_cycle(paths)
    vls = assign_vls(graph, routes)
    assert deadlock_free(graph, routes, vls)[0]
    for vl in set(vls.values()):
        on_vl = [p for p, (src_dst) in zip(paths, _pairs(fabric), strict=True)
                 if vls[lids[src_dst[1]]] == vl]
        assert not brute_force_has_cycle(on_vl)


def _pairs(fabric):
    hosts = [n.name for n in fabric.hosts]
    return [(a, b) for a in hosts for b in hosts if a != b]


@FAST
@given(st.dictionaries(st.integers(0, 300), st.integers(0, 254), max_size=40))
def test_forwarding_table_is_a_dlid_to_port_mapping(entries):
    table = ForwardingTable.from_mapping(entries)
    assert table == entries and dict(table) == entries and len(table) == len(entries)
    for dlid in list(entries)[:3]:
        del table[dlid]
        assert dlid not in table


def test_forwarding_table_refuses_a_port_it_cannot_hold():
    with pytest.raises(RoutingError, match="port 255"):
        ForwardingTable(4)[1] = 255


def test_engines_are_registered_by_name():
    assert [engine(n).name for n in ("minhop", "updn", "ftree")] == ["minhop", "updn", "ftree"]


def test_ftree_routes_around_any_single_failed_cable_without_deadlock():
    """Global reroute on a degraded fat tree: d-mod-k choices that lead to a switch that
    lost its way down move to the next up port."""
    from topologies.description import Fabric

    fabric, lids = fabric_and_lids("fattree:4")
    switches = {s.name for s in fabric.switches}
    for cut in (lk for lk in fabric.links if lk.a in switches and lk.b in switches):
        degraded = Fabric(fabric.name, fabric.nodes, tuple(lk for lk in fabric.links if lk != cut))
        graph = SwitchGraph.from_fabric(degraded, lids)
        routes = FatTree().route(degraded, lids)
        assert analyse(graph, routes).unreachable_pairs == 0, cut
        assert deadlock_free(graph, routes)[0], cut
