"""Backup ports for fast reroute: loop-free alternates, and no loop under any single link failure."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from routing_fabrics import fabric_and_lids, random_fabric

from controller.lids import LidMap
from controller.routing import engine
from controller.routing.backup import backup_routes, single_failure_loops
from controller.routing.graph import SwitchGraph

CASES = [("fattree:4", "ftree"), ("fattree:6", "ftree"), ("leafspine:3,2,2", "ftree"),
         ("fattree:4", "minhop"), ("fattree:4", "updn"), ("ring:5", "minhop"),
         ("ring:6", "updn"), ("dragonfly:2,2,1", "minhop"), ("dragonfly:3,1,1", "updn")]


def _setup(spec: str, name: str):
    fabric, lids = fabric_and_lids(spec)
    eng = engine(name)
    routes = eng.route(fabric, lids)
    return fabric, lids, SwitchGraph.from_fabric(fabric, lids), routes, \
        backup_routes(fabric, lids, routes, eng)


@pytest.mark.parametrize(("spec", "name"), CASES)
def test_no_backup_creates_a_loop_under_any_single_link_failure(spec, name):
    _f, _l, graph, routes, backups = _setup(spec, name)
    check = single_failure_loops(graph, routes, backups)
    assert check.loop_free, check.loops
    assert check.rerouted > 0
    assert check.rerouted + check.dropped == check.failures


@pytest.mark.parametrize("k", [4, 6])
def test_on_a_fat_tree_every_upward_route_falls_back_on_another_up_port(k):
    fabric, lids, graph, routes, backups = _setup(f"fattree:{k}", "ftree")
    half = k // 2
    up_ports = set(range(half + 1, k + 1))  # edge and aggregation: k/2 down, then k/2 up
    for sw in fabric.switches:
        if sw.tier == 2:
            assert len(backups[sw.name]) == 0  # cores only go down: no LFA exists
            continue
        for dlid, primary in routes[sw.name].items():
            if primary in up_ports:
                assert backups[sw.name][dlid] in up_ports - {primary}
            else:
                assert dlid not in backups[sw.name]


def test_a_fat_tree_leaf_loses_nothing_when_one_uplink_fails():
    _f, _l, graph, routes, backups = _setup("fattree:4", "ftree")
    check = single_failure_loops(graph, routes, backups)
    # every drop is a downward route (core -> aggregation, aggregation -> edge)
    assert check.dropped == check.failures - check.rerouted


@pytest.mark.parametrize(("spec", "name"), [("ring:5", "minhop"), ("dragonfly:2,2,1", "updn")])
def test_generic_backups_satisfy_the_lfa_inequality(spec, name):
    _f, _l, graph, routes, backups = _setup(spec, name)
    for host in graph.hosts:
        dist = graph.bfs([host.switch])
        for s, sname in enumerate(graph.names):
            port = backups[sname].get(host.lid)
            if port is None:
                continue
            neighbour = graph.peer(s, port)
            assert dist[neighbour] < 1 + dist[s]  # RFC 5286: d(N,D) < d(N,S) + d(S,D)


def test_a_backup_pointing_back_is_caught_as_a_loop():
    fabric, lids, graph, routes, backups = _setup("ring:4", "minhop")
    # s1 forwards to h3 (two hops away) on some port; make its backup the other ring port
    # and the neighbour's backup point back at s1: failing the right link loops.
    lid = lids["h3"]
    primary = routes["s1"][lid]
    ring_ports = [p for p, peer, _ in fabric.neighbours("s1") if peer.startswith("s")]
    other = next(p for p in ring_ports if p != primary)
    neighbour = graph.names[graph.peer(graph.index["s1"], other)]
    backups = {name: dict(t) for name, t in backups.items()}
    backups["s1"][lid] = other
    routes = {name: dict(t) for name, t in routes.items()}
    back = next(p for p, peer, _ in fabric.neighbours(neighbour) if peer == "s1")
    routes[neighbour][lid] = back  # the neighbour's primary points back at s1
    check = single_failure_loops(graph, routes, backups)
    assert not check.loop_free and "loop" in check.loops[0]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), switches=st.integers(2, 9), extra=st.integers(0, 8),
       hosts=st.integers(2, 8), name=st.sampled_from(["minhop", "updn"]))
def test_backups_on_random_fabrics_never_loop(seed, switches, extra, hosts, name):
    fabric = random_fabric(seed, switches, extra, hosts)
    lids = LidMap().assign(fabric)
    eng = engine(name)
    routes = eng.route(fabric, lids)
    backups = backup_routes(fabric, lids, routes, eng)
    check = single_failure_loops(SwitchGraph.from_fabric(fabric, lids), routes, backups)
    assert check.loop_free, check.loops
