"""Fault planning: a scenario's faults are resolved on the chosen topology before anything
starts; a target that means nothing there is refused in one line naming it and the fabric."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from fabriclab import scenario as sc
from fabriclab.plan import FaultPlanError, plan, uplinks
from topologies import link_names
from topologies.generators import build

ROOT = Path(__file__).resolve().parents[2]


def _scenario(topology: str, *faults: dict, **traffic) -> sc.Scenario:
    data = {"name": "t", "topology": topology, "faults": list(faults),
            "traffic": {"pattern": "allreduce-ring", **traffic}}
    return sc.parse(data, "t.toml")


def test_the_first_uplink_of_the_first_ranks_leaf_is_a_leaf_spine_link_on_every_fabric():
    link_failure = sc.load("link-failure-allreduce")
    for topology, expected in (("leafspine:2,2,1", "s1-s3"), ("fattree:4", "s1-s9"),
                               ("line:3", "s1-s2")):
        p = plan(link_failure.with_overrides(topology=topology))
        (fault,) = p.faults
        assert fault.label == expected, topology
        assert fault.link in p.fabric.links


def test_the_default_link_failure_target_is_the_link_it_always_was():
    p = plan(sc.load("link-failure-allreduce"))
    assert link_names.port_pair(p.faults[0].link) == "s1:2-s3:1"


def test_a_fixed_link_missing_from_the_topology_is_refused_naming_target_and_topology():
    s = _scenario("fattree:4", {"at_s": 0.1, "kind": "link_down", "target": "s1-s3"})
    with pytest.raises(FaultPlanError, match=r"target 's1-s3' on fattree:4: .*no link "
                                             r"between s1 and s3"):
        plan(s)


@pytest.mark.parametrize("fault, message", [
    ({"kind": "link_down", "target": "s1-s99"}, "has no node 's99'"),
    ({"kind": "link_down", "target": "rank:9/uplink:1"}, r"there are 2 ranks \(0..1\)"),
    ({"kind": "link_down", "target": "rank:0/uplink:3"}, "s1 has 2 uplink"),
    ({"kind": "link_down", "target": "h1"}, "expected `a-b`"),
    ({"kind": "stall", "target": "h2"}, "h2 runs no NIC in this scenario"),
    ({"kind": "stall", "target": "s1"}, "s1 is not a host"),
    ({"kind": "switch_kill", "target": "h1"}, "h1 is not a switch"),
    ({"kind": "stall", "target": "rank:0/uplink:1"}, "`uplink` names a link"),
])
def test_targets_that_mean_nothing_here_are_explained(fault, message):
    s = _scenario("leafspine:2,2,2", {"at_s": 0.1, **fault}, hosts=["h1", "h3"])
    with pytest.raises(FaultPlanError, match=message):
        plan(s)


@pytest.mark.parametrize("faults, message", [
    ([(1.0, "link_up", "s1-s3")], r"link_up at 1s, target s1-s3 .*: s1-s3 is not down then "
                                  r"\(no link_down of it before\)"),
    ([(1.0, "link_down", "s1-s3"), (1.5, "link_down", "s3-s1")],
     r"link_down at 1.5s.*: s1-s3 is already down \(since 1s\)"),
    ([(0.5, "unstall", "h1"), (1.0, "stall", "h1")], "h1 is not stalled then"),
    ([(0.5, "stall", "h1"), (1.0, "stall", "rank:0")], r"h1 is already stalled \(since 0.5s\)"),
])
def test_a_fault_that_would_change_nothing_is_refused_naming_the_state(faults, message):
    s = _scenario("leafspine:2,2,2", *({"at_s": t, "kind": k, "target": x}
                                       for t, k, x in faults), hosts=["h1", "h3"])
    with pytest.raises(FaultPlanError, match=message):
        plan(s)


def test_down_up_down_and_stall_unstall_pairs_plan():
    s = _scenario("leafspine:2,2,2", *({"at_s": t, "kind": k, "target": x} for t, k, x in (
        (1.0, "link_down", "s1-s3"), (1.5, "link_up", "s3-s1"), (2.0, "link_down", "s1-s3"),
        (0.5, "stall", "h1"), (0.8, "unstall", "h1"), (1.0, "stall", "h3"))),
        hosts=["h1", "h3"])
    assert len(plan(s).faults) == 6


def test_rank_relative_hosts_and_switches_resolve_in_rank_order():
    s = _scenario("leafspine:2,2,2", {"at_s": 0.1, "kind": "stall", "target": "rank:1"},
                  {"at_s": 0.2, "kind": "switch_kill", "target": "rank:1/switch"},
                  hosts=["h1", "h3"])
    stall, kill = plan(s).faults
    assert (stall.node, kill.node) == ("h3", "s2")


def test_uplinks_lead_to_the_higher_tier_and_on_a_flat_fabric_to_other_switches():
    fat = build("fattree:4")
    assert [link_names.node_pair(lk) for lk in uplinks(fat, "s1")] == ["s1-s9", "s1-s10"]
    assert [link_names.node_pair(lk) for lk in uplinks(fat, "s9")] == ["s9-s17", "s9-s18"]
    assert [link_names.node_pair(lk) for lk in uplinks(build("ring:3"), "s1")] == [
        "s1-s2", "s3-s1"]


def test_unknown_ranks_are_refused():
    s = _scenario("line:2", hosts=["h1", "h7"])
    with pytest.raises(sc.ScenarioError, match="h7 not host"):
        plan(s)


@pytest.mark.timing
def test_the_cli_refuses_an_impossible_target_in_under_two_seconds(tmp_path):
    toml = tmp_path / "bad.toml"
    toml.write_text((ROOT / "scenarios" / "link-failure-allreduce.toml").read_text()
                    .replace('"rank:0/uplink:1"', '"s1-s3"'))
    t0 = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "fabriclab.cli", "run", "--scenario", str(toml),
                           "--topo", "fattree:4", "--target", "embedded",
                           "--results", str(tmp_path / "results")],
                          capture_output=True, text=True, cwd=ROOT, timeout=30)
    elapsed = time.monotonic() - t0
    assert done.returncode == 2, done.stderr
    assert "s1-s3" in done.stderr and "fattree:4" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "results").exists(), "nothing started, nothing written"
    assert elapsed < 2.0


def test_link_spellings_convert_to_the_one_link():
    fabric = build("leafspine:2,2,1")
    link = link_names.find(fabric, "s1-s3")
    assert link_names.find(fabric, "s3-s1") == link
    assert link_names.find(fabric, "s1:2-s3:1") == link
    assert link_names.find(fabric, "s3-eth1") == link
    assert link_names.interfaces(link) == ("s1-eth2", "s3-eth1")
    with pytest.raises(link_names.LinkNameError, match="port 9 of s1 is not wired"):
        link_names.find(fabric, "s1-eth9")
