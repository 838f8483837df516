"""`fabriclab bringup` on Mininet fabrics: a fabric cabled and loaded as intended is ready
with every link passed; each fault built into the delivered fabric is found and named,
and nothing else is flagged.

The fault runs use leafspine:3,3,3 (6 switches, 9 hosts): with two cables out of use
(a swapped pair) every leaf still reaches every other through a shared spine, and
ftree routing still crosses every other cable. The missing, lossy and slow cables are on
three different leaves, so every pair of leaves still shares a spine.
"""

from __future__ import annotations

import json

import pytest

from fabriclab.bringup import BringupSettings, bringup
from topologies.targets import Target

pytestmark = [pytest.mark.mininet, pytest.mark.slow]

FAULT_FABRIC = "leafspine:3,3,3"
# 9 NICs and 6 switches on 2 cores: at 1000 pps they fell behind (tail drops at a
# leaf that caught up in a burst); at 500 pps every fault test has the headroom.
FAULT_RATE = 500


def _bring_up(tmp_path, topology: str, *faults: str, rate_pps: int = 1000,
              round_s: float = 1.5) -> dict:
    settings = BringupSettings(topology, faults=faults, rate_pps=rate_pps, round_s=round_s)
    run_dir, _acc = bringup(settings, Target.EMBEDDED, tmp_path / "results")
    data = json.loads((run_dir / "acceptance.json").read_text())
    assert (run_dir / "acceptance.md").exists() and (run_dir / "acceptance.html").exists()
    assert data["problems"] == [], "teardown and counters were clean"
    print(f"{topology} {faults}: {data['verdict']} in {data['time_to_ready_s']} s "
          f"{data['phases']}")
    print("\n".join(f"  {r}" for r in data["reasons"]))
    return data


def _failed(data: dict) -> dict[str, list[str]]:
    return {lk["link"]: lk["findings"] for lk in data["links"] if lk["verdict"] != "passed"}


# 20 switch processes and 16 NICs share this machine's 2 cores with other work: fattree:4
# is loaded at 500 pps per link, which they keep, in 3 s rounds (a switch descheduled
# for a moment then drops a burst: within 1% of a longer round's frames).
@pytest.mark.parametrize("topology, rate_pps, round_s", [("leafspine:2,2,2", 1000, 1.5),
                                                         ("fattree:4", 250, 3.0)])
def test_a_fabric_cabled_as_intended_is_ready_with_every_link_passed(tmp_path, topology,
                                                                      rate_pps, round_s):
    data = _bring_up(tmp_path, topology, rate_pps=rate_pps, round_s=round_s)
    assert data["verdict"] == "ready", data["reasons"]
    assert data["errors"] == [] and data["reasons"] == []
    assert all(lk["verdict"] == "passed" for lk in data["links"])
    assert len(data["links"]) == {"leafspine:2,2,2": 8, "fattree:4": 48}[topology]
    assert all(s["status"] == "ok" and s["pushed"] for s in data["switches"])
    for lk in data["links"]:
        for direction in lk["directions"].values():
            best = max(r["achieved_pps"] for r in direction["rounds"])
            assert best >= 0.8 * lk["configured_pps"]
            assert direction["all_to_all"]["link_errors"] == 0


# The faults share two runs (a run of this fabric takes ~40 s here), each fault on links
# of its own, so that a finding on the wrong link or a second finding shows.

def test_a_swapped_pair_of_cables_and_a_switch_running_an_old_program_are_named(tmp_path):
    data = _bring_up(tmp_path, FAULT_FABRIC, "miswire:s1-s4,s2-s5", "old_program:s3",
                     rate_pps=FAULT_RATE)
    failed = _failed(data)
    assert set(failed) == {"s1:4-s4:1", "s2:5-s5:2"}, "the old program's links still pass"
    assert failed["s1:4-s4:1"] == [
        "miswired cable s1:4 <-> s4:1: s1:4 reaches s5:2, s4:1 reaches s2:5"]
    differs = [s for s in data["switches"] if s["status"] != "ok"]
    assert [(s["switch"], s["status"], s["running"]["version"]) for s in differs] == [
        ("s3", "differs", "old")]
    assert data["verdict"] == "not-ready"
    assert f"switch s3: {differs[0]['detail']}" in data["reasons"]


def test_a_missing_a_lossy_and_a_slow_cable_are_each_named_on_their_link_only(tmp_path):
    data = _bring_up(tmp_path, FAULT_FABRIC, "missing:s3-s4", "lossy:s1-s5@0.05",
                     "slow:s2-s6@0.5", rate_pps=FAULT_RATE)
    failed = _failed(data)
    assert set(failed) == {"s3:4-s4:3", "s1:5-s5:1", "s2:6-s6:2"}, \
        "the links after the slow one are not named"
    assert failed["s3:4-s4:3"] == [
        "missing cable s3:4 <-> s4:3: no probe crossed it in either direction"]
    lossy = failed["s1:5-s5:1"]
    assert any(f.startswith("s1:5->s5:1:") and "link errors, 5.0%" in f for f in lossy)
    assert any(f.startswith("s5:1->s1:5:") and "link errors" in f for f in lossy)
    assert any(f"of its configured {FAULT_RATE} pps" in f for f in failed["s2:6-s6:2"])
    assert all(s["status"] == "ok" for s in data["switches"])


def test_an_unreachable_switch_is_named_and_nothing_hangs(tmp_path):
    data = _bring_up(tmp_path, "leafspine:2,2,2", "unreachable:s2")
    assert data["verdict"] == "not-ready"
    assert data["errors"] == ["1 switch(es) unreachable: s2"]
    assert [s["switch"] for s in data["switches"]] == ["s2"]
    assert "no P4Runtime server" in data["switches"][0]["detail"]
    assert data["phases"]["connect"] < 30
