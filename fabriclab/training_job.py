"""The training-job stage of a run (scenario [training]): what the run's faults cost the job.

Runs after the metrics stage, with the fault-free run of the same scenario (the
runner makes one first, in baseline/; a scenario without faults is its own):
traffic/training.py turns the NICs' summaries of both into the job's figures
(RunMetrics.training, keyed by the fabric's name).
"""

from __future__ import annotations

from fabriclab.plan import RunPlan
from traffic.metrics import RunMetrics, TrainingMetrics
from traffic.training import DAY_S, JobModel, TrainingInputError, job_metrics


def job_model(run_plan: RunPlan) -> JobModel:
    s = run_plan.scenario
    job, flaps = s.training, s.flaps
    per_day = job.failures_per_day or (DAY_S / flaps.every_s if flaps.count else 0.0)
    return JobModel(job.iterations, job.compute_ms / 1e3, job.checkpoint_interval_s,
                    job.restart_s, per_day)


def figures(run_plan: RunPlan, metrics: dict, baseline: RunMetrics | None) -> dict:
    """{"training": {fabric: TrainingMetrics}} for the run's metrics (a problem line
    instead when the NICs' summaries cannot describe the job)."""
    name = run_plan.scenario.name
    start = metrics.get("traffic_start_ns")
    if start is None or not metrics.get("nics"):
        return {"training": {name: TrainingMetrics(name, run_plan.scenario.training.iterations,
                                                   0, problems=("no traffic ran",))}}
    downs = [f.down_ns for f in metrics.get("link_failures", ())]
    base_nics, base_start = (baseline.nics, baseline.traffic_start_ns) if baseline else (
        (metrics["nics"], start) if not run_plan.faults else (None, None))  # its own
    try:
        result = job_metrics(name, job_model(run_plan), start, metrics["nics"], base_nics,
                             base_start, downs, metrics.get("failure_gaps", ()))
    except (TrainingInputError, KeyError, TypeError) as exc:
        return {"training": {name: TrainingMetrics(name, run_plan.scenario.training.iterations,
                                                   0, problems=(f"training figures: {exc}",))}}
    return {"training": {name: result}}
