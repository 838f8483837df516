"""Runs a partitions/QoS scenario against its solo run, and once per compared policy.

A scenario with `[qos] solo = true` or `[qos] compare = [...]` is several runs,
one emulation at a time, each a complete result directory inside the scenario's:

    <run>/solo/...            [traffic] alone (no [[background]]; with `compare`, the
                              last policy's configuration): the reference CCT
    <run>/<policy>/...        one per `compare` file (else one with `policy`)

The scenario's own directory holds the last run's topology, address book,
counters and telemetry (copies) and its pcaps/, nics/ and flows/ (links); its
metrics.json is the last run's, plus `solo_run`,
`solo_cct_ms`, `share_of_solo` (solo CCT / CCT: the throughput the collective
keeps) and, with `compare`, `arbitration`: per policy, `gradient_share_of_solo`
and `checkpoint_share` (the background classes' share of the ranks' sends while
the collective ran). The verdict is the worst of the runs'.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from fabriclab import results
from fabriclab.scenario import Scenario
from traffic.metrics import ArbitrationSetting, RunMetrics
from traffic.nic_summary import read_recv_log
from traffic.verdict import worst


def needs_comparison(scenario: Scenario) -> bool:
    return bool(scenario.qos.solo or scenario.qos.compare)


def run_compared(scenario: Scenario, target, results_root: Path, status, program_source,
                 run: Callable):
    """`run` is fabriclab.runner.run (one emulation); returns its RunResult type."""
    q = scenario.qos
    top = results.new_run_dir(results_root, scenario.name)
    results.write_json(top / "scenario.json", scenario.as_dict())
    single = replace(q, solo=False, compare=())
    status.set_phase("solo: [traffic] alone")
    # the same switch and NIC configuration (class queues, the last policy), no background
    solo_qos = replace(single, policy=q.compare[-1]) if q.compare else single
    solo = run(replace(scenario, background=(), qos=solo_qos), target, top / "solo", status,
               program_source)
    variants = [(Path(p).stem, replace(single, policy=p)) for p in q.compare] or \
        [("main", single)]
    runs = []
    for label, qos in variants:
        status.set_phase(f"{label}: with background traffic")
        runs.append((label, qos, run(replace(scenario, qos=qos), target, top / label, status,
                                     program_source)))
    last = runs[-1][2].metrics
    solo_cct = solo.metrics.cct_ms
    arbitration = {label: _setting(qos.policy, result, solo_cct) for label, qos, result in runs}
    verdicts = [solo.metrics.verdict] + [r.metrics.verdict for _l, _q, r in runs]
    reasons = tuple(f"{label}: {reason}" for label, _q, r in runs
                    for reason in r.metrics.verdict_reasons)
    merged = replace(last, solo_run=str(solo.run_dir), solo_cct_ms=solo_cct,
                     share_of_solo=_ratio(solo_cct, last.cct_ms),
                     arbitration=arbitration if q.compare else None,
                     verdict=worst(verdicts), verdict_reasons=reasons)
    last_dir = runs[-1][2].run_dir
    for name in ("versions.json", "topology.json", "address_book.json", "counters.json",
                 "telemetry.json"):
        source = last_dir / name  # what the last run ran on, for the result's reader
        if source.exists():
            shutil.copyfile(source, top / name)
    for name in ("pcaps", "nics", "flows"):  # the last run's captures and logs, linked
        if (last_dir / name).is_dir() and not (top / name).exists():
            (top / name).symlink_to(last_dir.relative_to(top) / name)
    merged.write(top / "metrics.json")
    results.write_report(top)
    return type(runs[-1][2])(top, merged)


def _ratio(solo_cct: float | None, cct: float | None) -> float | None:
    if not solo_cct or not cct:
        return None
    return round(solo_cct / cct, 4)


def _setting(policy_file: str, result, solo_cct: float | None) -> ArbitrationSetting:
    m: RunMetrics = result.metrics
    q = m.qos or {}
    policy = q.get("policy") or {}
    return ArbitrationSetting(
        policy_file=policy_file, run=str(result.run_dir), verdict=m.verdict, cct_ms=m.cct_ms,
        gradient_share_of_solo=_ratio(solo_cct, m.cct_ms), checkpoint_share=m.checkpoint_share,
        checkpoint_frames=_background_delivered(result.run_dir, q.get("traffic_class")),
        arbitration=policy.get("swe"))


def _background_delivered(run_dir: Path, traffic_class: str | None) -> int | None:
    """Frames of background flows (fabriclab/qos_traffic.py ids) the NICs delivered."""
    from fabriclab.qos_traffic import BACKGROUND_FLOW_BASE

    logs = sorted((Path(run_dir) / "nics").glob("*.recv.csv"))
    if not logs:
        return None
    return sum(1 for path in logs for r in read_recv_log(path)
               if r.flow >= BACKGROUND_FLOW_BASE and r.admitted == 1)
