"""Link faults in a run's figures. Frames lost on a failed link are the failure's while the
data plane uses it: until the switchover, and for a host's own link (a host has one port,
no switchover) until it is back up. A planned fault that never ran is named."""

from __future__ import annotations

from fabriclab import scenario as sc
from fabriclab.measure import faults_after_traffic, link_failures
from fabriclab.plan import plan
from fabriclab.traffic_run import TrafficRun
from traffic.faults import FaultEvent

S = 1_000_000_000


def _run(target: str, up: bool = True):
    faults = [{"at_s": 1.0, "kind": "link_down", "target": target}]
    if up:
        faults.append({"at_s": 2.0, "kind": "link_up", "target": target})
    run_plan = plan(sc.parse({"name": "w", "topology": "line:3", "faults": faults}, "w"))
    events = [FaultEvent(f"{f['kind']} x", f["at_s"], int((100 + f["at_s"]) * S),
                         int((100 + f["at_s"]) * S) + 1000) for f in faults]
    traffic = TrafficRun(("h1", "h2"), None, {}, 100.0, 103.0, {}, events, [], [], {}, [],
                         None)
    return run_plan, traffic


def test_a_host_link_failure_lasts_until_the_link_is_back_up():
    run_plan, traffic = _run("h1-s1")
    timeline = [{"event": "port_down", "link": "s1:1-h1:0", "detected_ns": 101 * S,
                 "switchover_ns": 101 * S + 5_000_000}]  # the switch's side: no help to h1
    [failure] = link_failures(run_plan, traffic, timeline)
    assert (failure.down_ns, failure.restored_ns) == (101 * S, 102 * S)


def test_a_host_link_that_stays_down_has_an_open_window():
    run_plan, traffic = _run("h1-s1", up=False)
    [failure] = link_failures(run_plan, traffic, [])
    assert failure.restored_ns is None


def test_a_switch_link_failure_ends_with_the_switchover():
    run_plan, traffic = _run("s1-s2")
    timeline = [{"event": "port_down", "link": "s1:2-s2:2", "detected_ns": 101 * S,
                 "switchover_ns": 101 * S + 5_000_000}]
    [failure] = link_failures(run_plan, traffic, timeline)
    assert failure.restored_ns == 101 * S + 5_000_000


def test_faults_that_came_after_the_traffic_are_named():
    run_plan, traffic = _run("s1-s2")
    traffic.summaries = {"h1": {"done_ns": int(101.5 * S)}, "h2": {"done_ns": 101 * S}}
    traffic.events = traffic.events[:1]  # cancelled: the traffic stage was over
    assert faults_after_traffic(run_plan, traffic) == [
        "fault link_up s1-s2 planned at 2 s did not run: the traffic was over after 1.50 s"]
    traffic.summaries = {h: {"done_ns": int(100.5 * S)} for h in ("h1", "h2")}  # before it
    assert faults_after_traffic(run_plan, traffic)[0] == (
        "fault link_down s1-s2 planned at 1 s came after the traffic was over after 0.50 s: "
        "nothing measured it")
    traffic.summaries, traffic.events = {"h1": {"missing": True}}, []
    assert faults_after_traffic(run_plan, traffic)[1] == (
        "fault link_up s1-s2 planned at 2 s did not run: the traffic was over")
