"""The solo/per-policy comparison of a QoS scenario, with a stand-in for one emulation."""

import json
from dataclasses import replace

from fabriclab import results
from fabriclab import scenario as sc
from fabriclab.qos_compare import needs_comparison, run_compared
from fabriclab.runner import RunResult
from fabriclab.status import StatusLine
from traffic.metrics import RunMetrics

CCT = {"": 500.0, "qos/equal-weights.conf": 800.0, "qos/gradient-favoured.conf": 520.0}


def fake_run(scenario, target, results_root, status, program_source):
    """One 'emulation': a result directory with what a run leaves, CCT by policy."""
    run_dir = results.new_run_dir(results_root, scenario.name)
    (run_dir / "pcaps").mkdir()
    (run_dir / "pcaps" / "h1.pcap").write_bytes(b"")
    (run_dir / "topology.json").write_text("{}")
    solo = not scenario.background
    policy = scenario.qos.policy
    m = RunMetrics(scenario=scenario.name, target="embedded", flow_control="credit",
                   verdict="pass" if policy != "qos/equal-weights.conf" else "incomplete",
                   cct_ms=CCT["" if solo else policy],
                   checkpoint_share=None if solo else 0.4 if "equal" in policy else 0.25,
                   qos={"policy": {"swe": {"low": [[0, 1]]}}, "traffic_class": "gradient"})
    m.write(run_dir / "metrics.json")
    return RunResult(run_dir, m)


def test_solo_then_each_policy_and_the_shares_against_solo(tmp_path):
    scenario = sc.load("checkpoint-vs-allreduce")
    assert needs_comparison(scenario)
    result = run_compared(scenario, None, tmp_path, StatusLine(), None, fake_run)
    m = result.metrics
    assert m.solo_cct_ms == 500.0
    equal, favoured = m.arbitration["equal-weights"], m.arbitration["gradient-favoured"]
    assert (equal.gradient_share_of_solo, equal.checkpoint_share) == (0.625, 0.4)
    assert (favoured.gradient_share_of_solo, favoured.checkpoint_share) == (0.9615, 0.25)
    assert m.cct_ms == 520.0 and m.share_of_solo == 0.9615  # the last run's, at the top
    assert m.verdict == "incomplete"  # the worst of the runs'
    top = result.run_dir
    assert {p.name for p in top.iterdir()} >= {"solo", "equal-weights", "gradient-favoured",
                                               "metrics.json", "report.md", "topology.json",
                                               "pcaps", "scenario.json"}
    assert (top / "pcaps" / "h1.pcap").exists()  # linked from the last run
    assert json.loads((top / "metrics.json").read_text())["arbitration"]["equal-weights"][
        "gradient_share_of_solo"] == 0.625


def test_a_solo_scenario_without_compare_is_solo_and_main(tmp_path):
    scenario = sc.load("partition-isolation")
    scenario = replace(scenario, qos=replace(scenario.qos, partitions=""))
    result = run_compared(scenario, None, tmp_path, StatusLine(), None, fake_run)
    assert {p.name for p in result.run_dir.iterdir()} >= {"solo", "main"}
    assert result.metrics.arbitration is None and result.metrics.share_of_solo is not None
