"""What the fabric's faults cost a training job: iterations, efficiency, interruptions.

The job (traffic/collectives.py with `compute_s`): every rank computes for
`compute_s`, then the gradients (`message_bytes`) are AllReduced; iteration k+1
starts at a rank once its part of iteration k's AllReduce arrived. The NICs'
summaries say when each rank completed each iteration's collective (coll_id k).

Definitions (all times from the NICs' CLOCK_REALTIME stamps):

* iteration k ends when the last rank completed collective k; its time is the
  end of k minus the end of k-1 (the job's start for the first);
  `comm_ms` = time - compute (the compute is on every iteration's critical path);
  `comm_share` = sum of comm / sum of iteration times;
* an iteration is `slowed` when it took longer than SLOWED_FACTOR x the slowest
  iteration of the fault-free run (the same job on the same fabric, no faults);
* interruption: a queue pair exhausted its retry limit. Only the NICs' own
  records say so (`rc_failures` in a summary, with `rc.flows_failed`): the job
  then dies (NCCL aborts on a QP error), rolls back to its last checkpoint (one
  every `checkpoint_interval_s` of job time) and restarts (`restart_s`).
  `rollback_s` = time since the last checkpoint, `compute_lost_s` = rollback_s +
  restart_s: GPU time spent for nothing;
* `parallel_efficiency` = useful iterations x the fault-free iteration time /
  the wall time they took (interrupted: the iterations up to the last
  checkpoint, over the time to the failure plus the restart); 1.0 = the faults
  cost nothing;
* per failure (link_down during the job): the longest a frame of a flow crossing
  the failed link, sent around the failure, waited for its delivery
  (`failure_gaps`, see `failure_gaps`);
* per day at `failures_per_day`: the mean slowdown per failure (the iterations'
  excess over the fault-free mean, all of them: a fabric with a link down is slower
  until it is back) plus, with the measured share of
  failures that interrupted the job, the expected rollback (half a checkpoint
  interval) and the restart, times the failures a day.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from topologies.link_names import same_link
from traffic.metrics import FailureGap, TrainingIteration, TrainingMetrics
from traffic.nic_summary import read_recv_log
from traffic.sender import read_log

SLOWED_FACTOR = 1.1  # slower than the fault-free run's slowest iteration by more than 10 %
DAY_S = 86400.0
IN_FLIGHT_NS = 50_000_000  # frames sent this long before a failure may still be on its link
HIT_WINDOW_NS = 500_000_000  # ... and frames sent this long after it may meet the broken path


class TrainingInputError(ValueError):
    """NIC summaries that do not describe a training job (no collectives)."""


@dataclass(frozen=True)
class JobModel:
    """The job's parameters (scenario [training])."""

    iterations: int
    compute_s: float
    checkpoint_interval_s: float
    restart_s: float
    failures_per_day: float = 0.0


@dataclass(frozen=True)
class Interruption:
    """A QP that exhausted its retry limit, as its NIC recorded it."""

    host: str
    flow: int
    t_ns: int
    timeouts: int
    why: str


def iteration_ends(summaries: Mapping[str, Mapping], iterations: int, first_coll_id: int = 1
                   ) -> list[int | None]:
    """Per iteration, when the last rank completed its collective (None: not every rank)."""
    ends: list[int | None] = []
    for k in range(iterations):
        cid = str(first_coll_id + k)
        parts = [s.get("collectives", {}).get(cid) for s in summaries.values()]
        parts = [p for p in parts if p is not None]
        if not parts:
            raise TrainingInputError(f"no NIC summary has collective {cid}: not a training "
                                     "job's summaries")
        ends.append(max(p["end_ns"] for p in parts) if all(p.get("complete") for p in parts)
                    else None)
    return ends


def iterations(summaries: Mapping[str, Mapping], job: JobModel, start_ns: int
               ) -> list[TrainingIteration]:
    """The completed iterations, in order, up to the first one that did not complete."""
    out: list[TrainingIteration] = []
    prev = start_ns
    for k, end in enumerate(iteration_ends(summaries, job.iterations)):
        if end is None:
            break
        time_ms = (end - prev) / 1e6
        out.append(TrainingIteration(k, round(time_ms, 3),
                                     round(max(0.0, time_ms - job.compute_s * 1e3), 3),
                                     end_ns=end))
        prev = end
    return out


def interruptions(summaries: Mapping[str, Mapping]) -> list[Interruption]:
    """Every QP that exhausted its retry limit, from the NICs' records, earliest first.
    A summary whose counters say a flow failed but which has no record is an error:
    nothing is charged on a guess."""
    out = []
    for host, s in sorted(summaries.items()):
        records = s.get("rc_failures") or []
        failed = (s.get("rc") or {}).get("flows_failed", 0)
        if failed != len(records):
            raise TrainingInputError(f"{host}: rc.flows_failed = {failed} but {len(records)} "
                                     "rc_failures records")
        errors = s.get("rc_errors") or []
        for i, r in enumerate(records):
            out.append(Interruption(host, int(r["flow"]), int(r["t_ns"]), int(r["timeouts"]),
                                    errors[i] if i < len(errors) else ""))
    return sorted(out, key=lambda r: r.t_ns)


def failure_gaps(sent_logs: Iterable[Path | str], recv_logs: Iterable[Path | str],
                 downs: Sequence[tuple[str, int]], paths: Mapping[int, list[str]]
                 ) -> list[FailureGap]:
    """Per link failure (link, down_ns): how long the frames the failure could hit waited
    for their delivery. Those are the frames of flows crossing the link (on the routes
    installed at the start) first sent from IN_FLIGHT_NS before the failure (on the wire
    or queued when it went) to HIT_WINDOW_NS after it (sent into the broken path); the
    wait of each is its in-order delivery minus its first send, and the failure's gap the
    longest; `usual_wait_ms` is the median wait of the same flows' frames over the whole
    run, what a frame the failure did not touch waits (transit and queues). `flows`
    are the flows with such frames (none: the failure hit nothing, e.g. every rank was
    computing); `recovered` is false when one of the frames was never delivered."""
    crossing = {int(f) for f, links in paths.items()
                if any(same_link(hop, link) for hop in links for link, _ in downs)}
    first_send: dict[int, dict[int, int]] = defaultdict(dict)
    for path in sent_logs:
        for flow, psn, ts in read_log(path):
            if flow in crossing and psn not in first_send[flow]:
                first_send[flow][psn] = ts
    delivered: dict[int, dict[int, int]] = defaultdict(dict)
    for path in recv_logs:
        for r in read_recv_log(path):
            if r.flow in crossing and r.admitted == 1:
                delivered[r.flow].setdefault(r.psn, r.recv_ns)
    out = []
    for link, down_ns in downs:
        waits: dict[int, list[int | None]] = {}
        for flow in sorted(crossing):
            if not any(same_link(hop, link) for hop in paths.get(flow, ())):
                continue
            got = delivered.get(flow, {})
            hit = [(psn, ts) for psn, ts in first_send.get(flow, {}).items()
                   if down_ns - IN_FLIGHT_NS <= ts <= down_ns + HIT_WINDOW_NS]
            if hit:
                waits[flow] = [got[psn] - ts if psn in got else None for psn, ts in hit]
        values = [w for ws in waits.values() for w in ws if w is not None]
        usual = [got - first_send[f][psn] for f in waits
                 for psn, got in delivered.get(f, {}).items() if psn in first_send[f]]
        out.append(FailureGap(link, down_ns, round(max(values) / 1e6, 3) if values else None,
                              tuple(waits), recovered=all(
                                  w is not None for ws in waits.values() for w in ws),
                              usual_wait_ms=round(statistics.median(usual) / 1e6, 3)
                              if usual else None))
    return out


def _rollback_s(start_ns: int, fail_ns: int, checkpoint_s: float) -> float:
    """Job time since the last checkpoint (taken every checkpoint_s from the start)."""
    elapsed = (fail_ns - start_ns) / 1e9
    return elapsed % checkpoint_s if checkpoint_s > 0 else elapsed


def job_metrics(fabric: str, job: JobModel, start_ns: int, summaries: Mapping[str, Mapping],
                baseline: Mapping[str, Mapping] | None, baseline_start_ns: int | None,
                downs_ns: Sequence[int], gaps: Sequence[FailureGap] = ()) -> TrainingMetrics:
    """The job's figures on one fabric (see the module doc)."""
    done = iterations(summaries, job, start_ns)
    problems: list[str] = []
    base = iterations(baseline, job, baseline_start_ns) if baseline and baseline_start_ns \
        else []
    if baseline is None:
        problems.append("no fault-free run: no efficiency nor slowed iterations")
    elif len(base) < job.iterations:
        problems.append(f"the fault-free run completed {len(base)} of {job.iterations} "
                        "iterations")
    base_mean = statistics.fmean(i.time_ms for i in base) if base else None
    threshold = SLOWED_FACTOR * max(i.time_ms for i in base) if base else None
    done = [TrainingIteration(i.index, i.time_ms, i.comm_ms, threshold is not None
                              and i.time_ms > threshold, i.end_ns) for i in done]
    total_ms = sum(i.time_ms for i in done)
    comm_share = sum(i.comm_ms for i in done) / total_ms if total_ms else None

    cut = interruptions(summaries)
    first = cut[0] if cut else None
    end_ns = first.t_ns if first else (done[-1].end_ns if done else start_ns)
    seen = [t for t in downs_ns if start_ns <= t <= end_ns]
    rollback = lost = None
    useful, wall_s = len(done), total_ms / 1e3
    if first is not None:
        rollback = _rollback_s(start_ns, first.t_ns, job.checkpoint_interval_s)
        lost = rollback + job.restart_s
        checkpoint_ns = first.t_ns - int(rollback * 1e9)
        useful = sum(1 for i in done if i.end_ns <= checkpoint_ns)
        wall_s = (first.t_ns - start_ns) / 1e9 + job.restart_s
    efficiency = (useful * base_mean / 1e3 / wall_s) if base_mean and wall_s > 0 else None

    slowdown_s = max(0.0, sum(i.time_ms - base_mean for i in done) / 1e3) if base_mean \
        else None
    per_failure = None
    if seen and slowdown_s is not None:
        share_interrupting = (1 if first else 0) / len(seen)
        per_failure = slowdown_s / len(seen) + share_interrupting * (
            job.checkpoint_interval_s / 2 + job.restart_s)
    per_day = per_failure * job.failures_per_day if per_failure is not None else None
    return TrainingMetrics(
        fabric=fabric, iterations_planned=job.iterations, iterations_done=len(done),
        iterations=tuple(done), compute_ms=job.compute_s * 1e3,
        baseline_iteration_ms=None if base_mean is None else round(base_mean, 3),
        comm_share=None if comm_share is None else round(comm_share, 4),
        parallel_efficiency=None if efficiency is None else round(efficiency, 4),
        iterations_slowed=sum(1 for i in done if i.slowed), failures=len(seen),
        failure_gaps=tuple(gaps), interruptions=1 if first else 0,
        interrupted_by=tuple(f"{r.host}: {r.why or f'flow {r.flow}'}" for r in cut),
        interrupted_at_s=None if first is None else round((first.t_ns - start_ns) / 1e9, 3),
        rollback_s=None if rollback is None else round(rollback, 3),
        compute_lost_s=round(lost, 3) if lost is not None else 0.0,
        slowdown_s=None if slowdown_s is None else round(slowdown_s, 3),
        failures_per_day=job.failures_per_day,
        compute_lost_per_failure_s=None if per_failure is None else round(per_failure, 3),
        compute_lost_per_day_s=None if per_day is None else round(per_day, 1),
        compute_lost_day_share=None if per_day is None else round(per_day / DAY_S, 4),
        problems=tuple(problems))
