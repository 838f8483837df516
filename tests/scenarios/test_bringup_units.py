"""Bring-up without a fabric: the stress planner, the bring-up faults and the fabric as
delivered, the per-link judgement, the acceptance report, and intended-fabric files."""

from __future__ import annotations

import json

import pytest

from controller.lids import LidMap
from controller.routing import engine
from fabriclab.acceptance import Acceptance, judge_all_to_all, judge_flow_path
from fabriclab.acceptance_report import write
from fabriclab.bringup_faults import as_delivered, switch_port_params
from fabriclab.intended import IntendedFabricError, intended_from_file
from fabriclab.plan import FaultPlanError, bringup_fault
from fabriclab.stress import ChannelLoad, PhaseResult
from fabriclab.stress_plan import RouteError, channels, path, plan_rounds
from topologies.description import LinkParams
from topologies.generators import build


def _routed(spec: str, routing: str = "ftree"):
    fabric = build(spec, LinkParams(rate_pps=1000))
    lids = LidMap().assign(fabric)
    return fabric, engine(routing).route(fabric, lids), lids


@pytest.mark.parametrize("spec", ["leafspine:2,2,2", "leafspine:3,2,2", "fattree:4"])
def test_rounds_load_every_direction_of_every_link_and_no_two_flows_share_one(spec):
    fabric, routes, lids = _routed(spec)
    plan = plan_rounds(fabric, routes, lids)
    assert plan.uncovered == ()
    covered = set()
    for flows in plan.rounds:
        used = [ch for f in flows for ch in f.path]
        assert len(used) == len(set(used)), "two flows of a round share a link direction"
        assert len({f.src for f in flows}) == len(flows) == len({f.dst for f in flows})
        covered.update(used)
    assert covered == set(channels(fabric))


def test_fattree_4_needs_only_two_rounds_with_ftree_routing():
    fabric, routes, lids = _routed("fattree:4")
    assert len(plan_rounds(fabric, routes, lids).rounds) == 2


def test_links_no_route_crosses_are_named_uncovered_not_tested():
    fabric, routes, lids = _routed("leafspine:2,2,1", "minhop")
    plan = plan_rounds(fabric, routes, lids)
    assert plan.uncovered and all(node.startswith("s") for node, _port in plan.uncovered)


def test_a_route_loop_is_refused_naming_the_switch():
    fabric, routes, lids = _routed("leafspine:2,2,2")
    lid = lids["h3"]
    routes["s1"][lid], routes["s3"][lid] = 3, 1  # s1 -> s3 -> s1 ...
    with pytest.raises(RouteError, match="loops at s1"):
        path(fabric, routes, lids, "h1", "h3")


# --------------------------------------------------------------------------- faults


def test_bringup_faults_resolve_on_the_fabric():
    fabric = build("leafspine:3,2,2")
    f = bringup_fault("lossy:s1-s5@0.05", fabric)
    assert (f.kind, f.link.a, f.link.b, f.value) == ("lossy", "s1", "s5", 0.05)
    f = bringup_fault("miswire:s1-s4,s2-s5", fabric)
    assert (f.link.b, f.peer.b) == ("s4", "s5")
    assert bringup_fault("old_program:s3", fabric).node == "s3"


@pytest.mark.parametrize("text, message", [
    ("lossy:s1-s5", "@FRACTION"), ("slow:s1-s5@1.5", "@FRACTION"),
    ("missing:s1-h1", "host's link"), ("miswire:s1-s4", "two links"),
    ("old_program:s9", "no node 's9'"), ("old_program:h1", "not a switch"),
    ("melt:s1", "expected one of"), ("missing:s1-s2", "s1-s2"),
    ("miswire:s1-s4,s1-s4", "same link"), ("missing:s1-s4@2", "takes no @VALUE")])
def test_a_bad_fault_is_refused_in_one_line_naming_it(text, message):
    with pytest.raises(FaultPlanError, match=message):
        bringup_fault(text, build("leafspine:3,2,2"))


def test_the_fabric_as_delivered_has_the_cable_faults_built_in():
    fabric = build("leafspine:3,2,2", LinkParams(rate_pps=1000))
    faults = tuple(bringup_fault(t, fabric) for t in (
        "miswire:s1-s4,s2-s5", "missing:s3-s4", "slow:s2-s4@0.5", "lossy:s1-s5@0.05"))
    delivered = as_delivered(fabric, faults)
    wires = {(lk.a, lk.a_port, lk.b, lk.b_port): lk.params.rate_pps for lk in delivered.links}
    assert ("s1", 3, "s5", 2) in wires and ("s2", 4, "s4", 1) in wires  # swapped far ends
    assert not any(a == "s3" and b == "s4" for a, _, b, _ in wires)
    assert wires[("s2", 3, "s4", 2)] == 500
    assert len(delivered.links) == len(fabric.links) - 1
    params = switch_port_params(delivered, faults)
    assert params["s1"][4].endswith(",loss=0.05") and params["s5"][1].endswith(",loss=0.05")
    assert "loss" not in params["s2"][3]


# --------------------------------------------------------------------------- judgement


def _load(sent, arrived=None, achieved=1000.0, **kw) -> ChannelLoad:
    arrived = sent if arrived is None else arrived
    return ChannelLoad(sent=sent, wire_sent=sent, wire_arrived=arrived,
                       window_s=sent / achieved, **kw)


def _flow_path(fabric, routes, lids, src, dst):
    return path(fabric, routes, lids, src, dst)


def test_a_clean_round_passes_every_link_on_the_path():
    fabric, routes, lids = _routed("leafspine:2,2,2")
    acc = Acceptance.of(fabric)
    hops = _flow_path(fabric, routes, lids, "h1", "h3")
    judge_flow_path(fabric, [(ch, _load(1500)) for ch in hops], acc.entries, "round 1")
    for ch in hops:
        assert acc.entries[ch].findings == []
        assert len(acc.entries[ch].tested) == 1


def test_the_first_slow_hop_is_named_and_the_hops_after_it_are_not():
    fabric, routes, lids = _routed("leafspine:2,2,2")
    acc = Acceptance.of(fabric)
    hops = _flow_path(fabric, routes, lids, "h1", "h3")  # h1 -> s1 -> spine -> s2 -> h3
    window = 1.5
    loads = [_load(1500), ChannelLoad(sent=800, wire_sent=800, wire_arrived=800,
                                      window_s=window, sender_drops={"tail": 700}),
             ChannelLoad(sent=800, wire_sent=800, wire_arrived=800, window_s=window),
             ChannelLoad(sent=800, wire_sent=800, wire_arrived=800, window_s=window)]
    judge_flow_path(fabric, list(zip(hops, loads)), acc.entries, "round 1")
    slow = acc.entries[hops[1]]
    assert any("carried 533 pps of its configured" in f for f in slow.findings)
    assert any("700 at s1:3 tail" in f for f in slow.findings)
    assert all(acc.entries[ch].findings == [] for ch in (hops[0], hops[2], hops[3]))
    assert any("limited upstream" in n for n in acc.entries[hops[2]].notes)


def test_a_hop_held_back_by_flow_control_is_not_the_slow_one():
    fabric, routes, lids = _routed("leafspine:2,2,2")
    acc = Acceptance.of(fabric)
    hops = _flow_path(fabric, routes, lids, "h1", "h3")
    held = ChannelLoad(sent=750, wire_sent=750, wire_arrived=750, window_s=1.5,
                       blocked_ms=700.0)
    slow = ChannelLoad(sent=750, wire_sent=750, wire_arrived=750, window_s=1.5)
    judge_flow_path(fabric, list(zip(hops, [held, held, slow, slow])), acc.entries, "round 1")
    assert [bool(acc.entries[ch].findings) for ch in hops] == [False, False, True, False]


def test_frames_lost_on_a_cable_are_link_errors_of_that_direction_only():
    fabric, routes, lids = _routed("leafspine:2,2,2")
    acc = Acceptance.of(fabric)
    hops = _flow_path(fabric, routes, lids, "h1", "h3")
    loads = [_load(1500), _load(1500, arrived=1425), _load(1425), _load(1425)]
    judge_flow_path(fabric, list(zip(hops, loads)), acc.entries, "round 1")
    assert acc.entries[hops[1]].findings == [
        "s1:3->s3:1: 75 of 1500 frames lost on the cable (link errors, 5.0%) in round 1"]
    assert all(not acc.entries[ch].findings for ch in (hops[0], hops[2], hops[3]))


def test_congestion_drops_in_an_all_to_all_fail_only_a_lossless_fabric():
    fabric, _routes, _lids = _routed("leafspine:2,2,2")
    loads = {ch: ChannelLoad(sent=100, wire_sent=100, wire_arrived=100, window_s=0.1,
                             sender_drops={"tail": 5} if ch == ("s1", 3) else {})
             for ch in channels(fabric)}
    result = PhaseResult("all-to-all", 1.0, loads, [], {})
    lossy, lossless = Acceptance.of(fabric), Acceptance.of(fabric)
    judge_all_to_all(fabric, result, lossy.entries, lossless=False)
    judge_all_to_all(fabric, result, lossless.entries, lossless=True)
    assert lossy.entries[("s1", 3)].findings == [] and lossy.entries[("s1", 3)].notes
    assert "5 at s1:3 tail" in lossless.entries[("s1", 3)].findings[0]


def test_an_untested_link_keeps_the_fabric_from_ready():
    fabric, _routes, _lids = _routed("leafspine:2,2,2")
    acc = Acceptance.of(fabric)
    for entry in acc.links():
        entry.tested = {"a", "b"}
    assert acc.verdict == "ready"
    acc.entries[("s1", 3)].tested = {"a"}
    assert acc.verdict == "not-ready"
    assert acc.reasons() == ["not tested: s1:3-s3:1"]


def test_the_report_names_the_verdict_the_failed_link_and_the_phases(tmp_path):
    fabric, routes, lids = _routed("leafspine:2,2,2")
    acc = Acceptance.of(fabric)
    hops = _flow_path(fabric, routes, lids, "h1", "h3")
    loads = [_load(1500), _load(1500, arrived=1425), _load(1425), _load(1425)]
    judge_flow_path(fabric, list(zip(hops, loads)), acc.entries, "round 1")
    acc.phases = {"power-on": 2.0, "compile": 1.0, "stress rounds": 5.0}
    acc.switches = [{"switch": "s2", "status": "differs", "pushed": False, "running": None,
                     "detail": "runs version old"}]
    (tmp_path / "acceptance.json").write_text(json.dumps(acc.as_dict()))
    md, page = write(tmp_path)
    text = md.read_text()
    assert "# Acceptance of leafspine:2,2,2: not-ready" in text
    assert "| s1:3-s3:1 | switch | 1000 | ok | **FAILED** |" in text
    assert "switch s2: runs version old" in text
    assert text.index("| compile |") < text.index("| power-on |") < text.index("| stress")
    assert "from power-on to the verdict | 7.0" in text
    assert "<td>**FAILED**</td>" not in page.read_text() and "<b>FAILED</b>" in page.read_text()


# --------------------------------------------------------------------------- intended files

NETFILE = """\
switchguid=0x{g1:x}
Switch 4 "leaf-a"
[1] "host-a"[1]
[2] "spine"[1]

switchguid=0x{g2:x}
Switch 4 "spine"
[1] "leaf-a"[2]

caguid=0x{h1:x}
Ca 1 "host-a"
[1] "leaf-a"[1]
"""


def test_an_intended_file_is_matched_to_the_running_fabric_by_guid(tmp_path):
    running = build("line:2")
    s1, s2, h1 = (running.node(n).guid for n in ("s1", "s2", "h1"))
    file = tmp_path / "fabric.net"
    file.write_text(NETFILE.format(g1=s1, g2=s2, h1=h1))
    intended = intended_from_file(str(file), running, LinkParams())
    assert {n.name: n.label for n in intended.nodes} == {"s1": "leaf-a", "s2": "spine",
                                                         "h1": "host-a"}
    assert {(lk.a, lk.b) for lk in intended.links} >= {("s1", "s2")}


def test_an_unknown_switch_in_the_intended_file_is_named_with_its_line(tmp_path):
    running = build("line:2")
    s1, h1 = running.node("s1").guid, running.node("h1").guid
    file = tmp_path / "fabric.net"
    file.write_text(NETFILE.format(g1=s1, g2=0xDEAD, h1=h1))
    with pytest.raises(IntendedFabricError, match=r"fabric.net:7: switch 'spine' "
                                                  r"\(guid 0xdead\) is not in the running"):
        intended_from_file(str(file), running, LinkParams())


def test_a_bring_up_whose_intended_file_names_an_unknown_switch_reports_it(tmp_path):
    """Nothing starts: the report says which switch of which file, and why."""
    from fabriclab.bringup import BringupSettings, bringup
    from topologies.targets import Target

    running = build("line:2")
    file = tmp_path / "fabric.net"
    file.write_text(NETFILE.format(g1=running.node("s1").guid, g2=0xDEAD,
                                   h1=running.node("h1").guid))
    run_dir, acc = bringup(BringupSettings("line:2", intended=str(file)), Target.EMBEDDED,
                           tmp_path / "results")
    data = json.loads((run_dir / "acceptance.json").read_text())
    assert data["verdict"] == "not-ready"
    assert data["errors"] == [f"{file}:7: switch 'spine' (guid 0xdead) is not in the "
                              "running fabric line:2"]
    assert "switch 'spine'" in (run_dir / "acceptance.md").read_text()
    assert (run_dir / "acceptance.html").exists() and acc.phases == {}


def test_the_counters_are_read_at_once_when_every_data_frame_arrived(monkeypatch):
    from types import SimpleNamespace

    from fabriclab import stress

    slept: list[float] = []
    monkeypatch.setattr(stress.time, "sleep", slept.append)
    fabric = SimpleNamespace(switches=[object()] * 20)
    settings = SimpleNamespace(rate_pps=250)
    stress._settle(fabric, settings, {"h1": {"sent": 10, "received": 0},
                                      "h2": {"sent": 0, "received": 10}})
    stress._settle(fabric, settings, {"h1": {"sent": 10, "received": 0},
                                      "h2": {"sent": 0, "received": 9}})
    stress._settle(fabric, settings, {"h1": {"sent": 10, "received": 10},
                                      "h2": {"missing": True}})
    # nothing queued: the flow-control tail only; a frame short or a NIC unheard: a
    # queue per switch may still drain at the link rate
    assert slept == [0.3, 0.3 + 64 * 20 / 250, 0.3 + 64 * 20 / 250]
