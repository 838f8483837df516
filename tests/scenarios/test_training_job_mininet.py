"""The training-job scenario on its two fabrics (Mininet, root): the contrast, with numbers.

The same job (compute, then the gradients' ring AllReduce, 40 iterations) and the
same flaps of a leaf-spine uplink on
* ib-like: CREDIT + fast reroute + the SM's global reroute: every failure costs
  milliseconds to a few hundred, the job is never interrupted;
* roce-like: PFC, no local reroute, the SM's reroute only after a 3 s convergence
  delay (the RoCE/BGP stand-in): the queue pairs crossing the link exhaust their
  retry limit, the job is interrupted and charged its rollback and restart.

An interruption is charged only where a NIC recorded a queue pair exhausting its
retry limit: checked against every NIC summary of both runs.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fabriclab import scenario as sc
from fabriclab.compare import run_compared
from tests.scenarios.result_contract import assert_complete_result, assert_no_leftovers
from topologies.targets import TargetError, resolve
from traffic.metrics import RunMetrics
from traffic.report_sections import training_notes, training_rows

pytestmark = [pytest.mark.mininet, pytest.mark.slow]


@pytest.fixture(scope="module")
def compared(tmp_path_factory):
    try:
        target = resolve("embedded")
    except TargetError as exc:
        pytest.skip(str(exc))
    result = run_compared(sc.load("training-job"), target, tmp_path_factory.mktemp("tj"))
    m = result.metrics
    print("\n" + "\n".join("  ".join(r) for r in training_rows(m.training or {})))
    print("\n".join(training_notes(m.training or {})))
    return result.run_dir, m


def _summaries(run_dir: Path) -> dict[str, dict]:
    return {p.name.removesuffix(".summary.json"): json.loads(p.read_text())
            for p in sorted(run_dir.glob("nics/*.summary.json"))}


def _sends_ns(nics: Path, host: str, flow: int, psn: int) -> list[int]:
    """When `host`'s sender log says it sent (flow, psn) (PSNs run on over a flow's
    messages, so a PSN is sent again only by a retransmission)."""
    rows = (line.split(",") for line in (nics / f"{host}.sent.csv").read_text().splitlines()
            if line and not line.startswith(("#", "flow,")))
    return sorted(int(t) for f, p, t in rows if int(f) == flow and int(p) == psn)


def _assert_retry_limit_hit(nics: Path, host: str, record: dict, summary: dict) -> None:
    """A queue pair really exhausted its retry limit, by its sender log rather than its
    summary's word: the PSN it failed on was sent once and again at each of `limit`
    timeouts in a row (a timeout resends the oldest frame), each resend at least the
    timeout's floor after the one before, and the flow failed after the last. (The
    receiver may have taken the first copy: the ACK is what never came back.)"""
    flow, psn = int(record["flow"]), int(record["psn"])
    limit = summary["rc_config"]["retry_limit"]
    floor_ns = summary["rc_config"]["rto_min_ms"] * 1e6
    sends = _sends_ns(nics, host, flow, psn)
    assert len(sends) >= limit + 1, f"{host} flow {flow} PSN {psn}: sent {len(sends)} times"
    waits = [b - a for a, b in zip(sends, sends[1:])]
    assert all(w >= floor_ns for w in waits[-limit:]), (host, flow, psn, waits)
    assert record["t_ns"] - sends[-1] >= floor_ns, (host, flow, psn, record["t_ns"], sends)


def test_metrics_carry_the_job_figures_per_fabric(compared):
    run_dir, m = compared
    assert set(m.training) == {"ib-like", "roce-like"}
    again = RunMetrics.read(run_dir / "metrics.json")  # as written, typed
    for name, t in again.training.items():
        assert t.parallel_efficiency is not None and t.comm_share is not None, name
        assert t.interruptions in (0, 1) and t.compute_lost_s >= 0, name
        # each fabric's fault-free run, what efficiency is measured against
        assert list((run_dir / m.compared_runs[name] / "baseline").glob("*/metrics.json"))
    assert "Training job" in (run_dir / "report.md").read_text()


def test_every_fabric_run_leaves_a_complete_result(compared):
    run_dir, m = compared
    for name, sub in m.compared_runs.items():
        fabric_run = run_dir / sub
        assert_complete_result(fabric_run)
        metrics = RunMetrics.read(fabric_run / "metrics.json")
        assert metrics.error is None, (name, metrics.error)
        assert_no_leftovers(metrics.run_prefix)


def test_ib_like_fabric_recovers_in_milliseconds_and_the_job_is_not_interrupted(compared):
    _run_dir, m = compared
    ib = m.training["ib-like"]
    assert ib.iterations_done == ib.iterations_planned
    assert ib.interruptions == 0 and ib.compute_lost_s == 0
    assert ib.failures == 2
    hit = [g for g in ib.failure_gaps if g.gap_ms is not None]
    assert all(g.recovered for g in ib.failure_gaps)
    assert all(g.gap_ms < 500 for g in hit), ib.failure_gaps  # far below the retry budget
    assert ib.parallel_efficiency > 0.5


def test_roce_like_fabric_exhausts_the_retry_limit_and_pays_the_rollback(compared):
    _run_dir, m = compared
    roce, ib = m.training["roce-like"], m.training["ib-like"]
    assert roce.interruptions == 1 and roce.interrupted_at_s is not None
    assert roce.iterations_done < roce.iterations_planned
    assert not roce.failure_gaps[0].recovered  # frames sent into the failure never arrived
    assert roce.compute_lost_s == pytest.approx(roce.rollback_s + 30.0, abs=0.01)
    # the contrast, per failure and per day at the same failure rate
    assert roce.compute_lost_per_failure_s > 10 * ib.compute_lost_per_failure_s
    assert roce.parallel_efficiency < ib.parallel_efficiency


def test_an_interruption_is_charged_only_where_a_nic_hit_its_retry_limit(compared):
    run_dir, m = compared
    for name, rel in m.compared_runs.items():
        summaries = _summaries(run_dir / rel)
        failures = [(host, r) for host, s in summaries.items() for r in s["rc_failures"]]
        assert sum(s["rc"]["flows_failed"] for s in summaries.values()) == len(failures)
        limit = {s["rc_config"]["retry_limit"] for s in summaries.values()}
        assert all(r["timeouts"] in limit for _h, r in failures), failures
        for host, r in failures:  # and the sender log shows it happened
            _assert_retry_limit_hit(run_dir / rel / "nics", host, r, summaries[host])
        t = m.training[name]
        assert t.interruptions == (1 if failures else 0), (name, failures)
        if failures:
            first = min(r["t_ns"] for _h, r in failures)
            start = min(s["start_ns"] for s in summaries.values())
            assert t.interrupted_at_s == pytest.approx((first - start) / 1e9, abs=0.05)
            assert {b.split(":")[0] for b in t.interrupted_by} == {h for h, _r in failures}
