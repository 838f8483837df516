"""Fault notification's safety check (controller/routing/notification.py) and the SM's use of it."""

from __future__ import annotations

import pytest

from controller.lids import LidMap
from controller.routing import engine
from controller.routing.backup import backup_routes
from controller.routing.graph import SwitchGraph
from controller.routing.notification import notification_cdg, notification_check
from controller.sm import SubnetManager
from topologies.generators import build


def _check(topology: str, engine_name: str):
    fabric = build(topology)
    lids = LidMap().assign(fabric)
    eng = engine(engine_name)
    routes = eng.route(fabric, lids)
    backups = backup_routes(fabric, lids, routes, eng)
    return notification_check(SwitchGraph.from_fabric(fabric, lids), routes, backups)


@pytest.mark.parametrize("engine_name", ["minhop", "updn", "ftree"])
@pytest.mark.parametrize("topology", ["leafspine:2,2,1", "fattree:4"])
def test_fat_trees_are_deadlock_free_with_notification_and_every_single_failure_heals(
        topology, engine_name):
    check = _check(topology, engine_name)
    assert check.deadlock_free, check.cycle
    # backups alone save only the direction that goes up into the failed link; with
    # notification upstream every source reaches every destination again
    assert check.affected > 0
    assert check.rerouted_locally < check.affected
    assert check.rerouted_notified == check.affected and check.coverage == 1.0, check.dropped


def test_fattree_4_counts():
    check = _check("fattree:4", "ftree")
    assert (check.affected, check.rerouted_locally, check.rerouted_notified) == (416, 208, 416)


def test_backups_on_a_ring_close_a_cycle_and_the_check_names_it():
    check = _check("ring:4", "updn")
    assert not check.deadlock_free
    assert check.cycle.startswith("VL 0: ") and "->" in check.cycle


def test_the_cdg_holds_the_backup_hops():
    fabric = build("leafspine:2,2,1")
    lids = LidMap().assign(fabric)
    eng = engine("ftree")
    routes = eng.route(fabric, lids)
    graph = SwitchGraph.from_fabric(fabric, lids)
    without = notification_cdg(graph, routes, {})[0]
    with_backups = notification_cdg(graph, routes, backup_routes(fabric, lids, routes, eng))[0]
    assert without < with_backups  # the backup up-ports add dependencies


@pytest.mark.parametrize(("topology", "engine_name", "on"),
                         [("fattree:4", "ftree", True), ("ring:4", "updn", False)])
def test_the_sm_turns_notification_on_only_where_the_check_passes(topology, engine_name, on):
    fabric = build(topology)
    sm = SubnetManager(fabric, {sw.name: None for sw in fabric.switches},
                       engine=engine(engine_name))
    sm.compute_routes()
    assert sm.notifying is on
    assert ("cycle" in sm.notify_problem) is not on
    off = SubnetManager(fabric, {sw.name: None for sw in fabric.switches},
                        engine=engine(engine_name), fast_reroute=False)
    off.compute_routes()
    assert not off.notifying  # no backups: nothing to switch to
