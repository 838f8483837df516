"""A collective that cannot be scheduled on the scenario's ranks, or a routing engine that
cannot route the fabric, is refused by the plan before anything starts, with one line
saying why (it was an error once the fabric was up, or a silently different run)."""

from __future__ import annotations

import pytest

from fabriclab import scenario as sc
from fabriclab.plan import plan


def _plan(traffic: dict, topology: str = "leafspine:2,1,2"):
    return plan(sc.parse({"name": "c", "topology": topology, "traffic": traffic}, "c.toml"))


@pytest.mark.parametrize("traffic, message", [
    ({"pattern": "allreduce-hd", "hosts": ["h1", "h2", "h3"]},
     r"\[traffic\] hosts \(h1, h2, h3\), pattern allreduce-hd: halving-doubling needs a "
     "power-of-two rank count, got 3"),
    ({"pattern": "allreduce-ring", "hosts": ["h1"]}, "a collective needs at least 2 ranks"),
    ({"pattern": "alltoall", "hosts": ["h1", "h1", "h2"]},
     r"\[traffic\] hosts: h1 listed more than once"),
    ({"pattern": "incast", "hosts": ["h1", "h3", "h4"]},  # the root was rank 0 silently
     r"\[traffic\] dst 'h2' \(the incast's root; default h2\) is not one of the ranks: "
     "h1, h3, h4"),
])
def test_a_collective_that_cannot_run_on_its_ranks_is_refused(traffic, message):
    with pytest.raises(sc.ScenarioError, match=message):
        _plan(traffic)


def test_collectives_that_can_run_are_planned():
    assert _plan({"pattern": "allreduce-hd"}).ranks == ("h1", "h2", "h3", "h4")
    assert _plan({"pattern": "incast", "hosts": ["h3", "h4"], "dst": "h4"}).ranks == (
        "h3", "h4")
    assert _plan({"pattern": "permutation"}, "line:2").ranks == ("h1", "h2")


@pytest.mark.parametrize("topology", ["line:3", "ring:3", "dragonfly:2,1,1"])
def test_a_routing_engine_that_cannot_route_the_fabric_is_refused_by_the_plan(topology):
    data = {"name": "r", "topology": topology, "routing": "ftree"}
    with pytest.raises(sc.ScenarioError, match=f"routing 'ftree' on {topology}: ftree: .* "
                                               "not a fat tree"):
        plan(sc.parse(data, "r.toml"))  # was the SM's RoutingError once the fabric was up


def test_every_engine_plans_on_the_fabrics_it_routes():
    for routing in ("minhop", "updn", "ftree"):
        data = {"name": "r", "topology": "leafspine:2,2,2", "routing": routing}
        assert plan(sc.parse(data, "r.toml")).fabric.name == "leafspine:2,2,2"
