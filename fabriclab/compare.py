"""A scenario that compares fabrics ([[compare]]): the same traffic and fault schedule,
once per fabric, one result directory over all of them.

Each fabric is a complete run (fabriclab/runner.py) in its own directory below
the comparison's, with the fault-free run it needs in its baseline/. The
comparison's metrics.json keeps each fabric's training figures under its
`[[compare]] name` (`training`), the runs' directories (`compared_runs`), and
the worst verdict of the runs with each run's reasons; its report puts the
fabrics side by side (traffic/report.py).
"""

from __future__ import annotations

from pathlib import Path

from fabriclab import results
from fabriclab.runner import FABRIC_P4, RunResult, run
from fabriclab.scenario import Scenario, variant
from fabriclab.status import StatusLine
from fabriclab.sweep import SWEEP_COLUMNS
from topologies.targets import Target
from traffic.metrics import RunMetrics
from traffic.verdict import worst

# one fabric's figures in the comparison: what a sweep point's line shows
COMPARED_FIGURES = SWEEP_COLUMNS


def run_compared(scenario: Scenario, target: Target, results_root: Path,
                 status: StatusLine | None = None, program_source: Path = FABRIC_P4
                 ) -> RunResult:
    status = status or StatusLine()
    run_dir = results.new_run_dir(results_root, scenario.name)
    results.write_json(run_dir / "scenario.json", scenario.as_dict())
    runs: dict[str, RunResult] = {}
    for i, spec in enumerate(scenario.compare, 1):
        status.set_phase(f"fabric {i}/{len(scenario.compare)}: {spec.name}")
        runs[spec.name] = run(variant(scenario, spec), target, run_dir, status, program_source)
        _write(scenario, target, run_dir, runs)  # after every fabric: nothing is lost
    return RunResult(run_dir, _write(scenario, target, run_dir, runs))


def combine(scenario: Scenario, target: str, runs: dict[str, RunMetrics],
            run_dirs: dict[str, str]) -> RunMetrics:
    """The comparison's metrics from each fabric's run."""
    training, reasons, problems = {}, [], []
    compared = {name: {k: getattr(m, k) for k in COMPARED_FIGURES} for name, m in runs.items()}
    for name, m in runs.items():
        figures = (m.training or {}).get(f"{scenario.name}-{name}")
        if figures is not None:
            training[name] = figures
        elif scenario.training.iterations:
            problems.append(f"{name}: no training figures ({m.error or 'the job did not run'})")
        reasons += [f"{name}: {r}" for r in m.verdict_reasons]
        if m.error:
            reasons.append(f"{name}: {m.error}")
    return RunMetrics(scenario=scenario.name, target=target, flow_control="compare",
                      verdict=worst(m.verdict for m in runs.values()),
                      verdict_reasons=tuple(reasons), problems=tuple(problems),
                      topology=scenario.topology, training=training,
                      compared=compared, compared_runs=dict(run_dirs))


def _write(scenario: Scenario, target: Target, run_dir: Path, runs: dict[str, RunResult]
           ) -> RunMetrics:
    metrics = combine(scenario, target.value, {n: r.metrics for n, r in runs.items()},
                      {n: r.run_dir.name for n, r in runs.items()})
    metrics.write(run_dir / "metrics.json")
    results.write_report(run_dir)
    return metrics
