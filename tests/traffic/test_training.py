"""The training-job model's arithmetic (traffic/training.py) on synthetic NIC summaries."""

from __future__ import annotations

import pytest

from traffic.training import (
    JobModel,
    TrainingInputError,
    failure_gaps,
    interruptions,
    iterations,
    job_metrics,
)

MS = 1_000_000
START = 1_000_000_000_000


def summaries(ends_ms: dict[str, list[float | None]], failures: dict[str, list[dict]] | None = None):
    """NIC summaries whose rank completed iteration k (coll_id k+1) at ends_ms[rank][k]."""
    out = {}
    for host, ends in ends_ms.items():
        colls = {str(k + 1): {"complete": e is not None,
                              "end_ns": None if e is None else START + int(e * MS)}
                 for k, e in enumerate(ends)}
        recs = (failures or {}).get(host, [])
        out[host] = {"collectives": colls, "rc": {"flows_failed": len(recs)},
                     "rc_failures": recs,
                     "rc_errors": [f"flow {r['flow']}: 7 retransmission timeouts in a row"
                                   for r in recs]}
    return out


JOB = JobModel(iterations=4, compute_s=0.05, checkpoint_interval_s=0.25, restart_s=2.0,
               failures_per_day=24)
BASE = summaries({"h1": [100, 200, 300, 400], "h2": [99, 201, 299, 400]})


def test_iteration_time_is_the_last_rank_and_comm_is_what_compute_leaves():
    its = iterations(BASE, JOB, START)
    assert [i.time_ms for i in its] == [100, 101, 99, 100]
    assert [i.comm_ms for i in its] == [50, 51, 49, 50]


def test_fault_free_job_is_fully_efficient_with_half_its_time_communicating():
    m = job_metrics("ib", JOB, START, BASE, BASE, START, downs_ns=[])
    assert m.iterations_done == 4 and m.parallel_efficiency == pytest.approx(1.0)
    assert m.comm_share == pytest.approx(200 / 400)
    assert m.iterations_slowed == 0 and m.interruptions == 0 and m.compute_lost_s == 0


def test_a_slowed_iteration_costs_efficiency_and_its_excess_per_failure():
    faulted = summaries({"h1": [100, 350, 450, 550], "h2": [100, 350, 450, 550]})
    m = job_metrics("roce", JOB, START, faulted, BASE, START, downs_ns=[START + 120 * MS])
    assert [i.slowed for i in m.iterations] == [False, True, False, False]
    assert m.iterations_slowed == 1 and m.failures == 1
    assert m.parallel_efficiency == pytest.approx(4 * 100 / 550, abs=1e-4)
    assert m.slowdown_s == pytest.approx(0.150)  # 250 ms against the 100 ms fault-free mean
    assert m.compute_lost_per_failure_s == pytest.approx(0.150)
    assert m.compute_lost_per_day_s == pytest.approx(24 * 0.150, abs=0.1)
    assert m.interruptions == 0


def test_an_exhausted_retry_limit_charges_the_rollback_and_the_restart():
    fail = {"flow": 1001, "dlid": 2, "psn": 40, "coll_id": 4, "timeouts": 7,
            "t_ns": START + 380 * MS}
    faulted = summaries({"h1": [100, 200, 300, None], "h2": [100, 200, 300, None]},
                        {"h1": [fail]})
    m = job_metrics("roce", JOB, START, faulted, BASE, START, downs_ns=[START + 310 * MS])
    assert m.interruptions == 1 and m.interrupted_at_s == pytest.approx(0.38)
    assert "h1: flow 1001" in m.interrupted_by[0]
    # checkpoints every 0.25 s: the one at 0.25 s; 0.13 s rolled back, 2 s to restart
    assert m.rollback_s == pytest.approx(0.13)
    assert m.compute_lost_s == pytest.approx(2.13)
    assert m.iterations_done == 3
    # useful: the 2 iterations done by the checkpoint, over 0.38 s + the 2 s restart
    assert m.parallel_efficiency == pytest.approx(2 * 0.1 / 2.38, rel=1e-3)
    # per failure: 1 of 1 failures interrupted: half a checkpoint interval + the restart
    assert m.compute_lost_per_failure_s == pytest.approx(0.125 + 2.0)


def test_no_interruption_is_charged_without_a_nic_record():
    slow = summaries({"h1": [100, 200, 300, None], "h2": [100, 200, 300, None]})
    m = job_metrics("roce", JOB, START, slow, BASE, START, downs_ns=[])
    assert m.interruptions == 0 and m.compute_lost_s == 0 and m.iterations_done == 3


def test_counters_without_records_are_refused_rather_than_guessed():
    bad = summaries({"h1": [100]})
    bad["h1"]["rc"]["flows_failed"] = 1
    with pytest.raises(TrainingInputError, match="flows_failed"):
        interruptions(bad)


def test_summaries_of_no_collective_are_refused():
    with pytest.raises(TrainingInputError, match="collective 1"):
        iterations({"h1": {"collectives": {}}}, JOB, START)


def test_failure_gap_counts_only_moving_flows_crossing_the_link(tmp_path):
    log = tmp_path / "h2.recv.csv"
    down = START + 500 * MS
    rows = []
    for t in (480, 490, 499, 530, 531):  # flow 1 crosses s1-s3: 31 ms gap
        rows.append((1, 0, 0, START + t * MS, 1, 1, 0, 0, 1))
    for t in (400, 700):  # flow 2 crosses it but was idle (compute): not counted
        rows.append((2, 0, 0, START + t * MS, 1, 1, 0, 0, 1))
    for t in (495, 800):  # flow 3 moving but elsewhere
        rows.append((3, 0, 0, START + t * MS, 1, 1, 0, 0, 1))
    log.write_text("# v1\nflow,psn,send_ns,recv_ns,slid,coll_id,step,chunk,admitted\n"
                   + "".join(",".join(map(str, r)) + "\n" for r in rows))
    paths = {1: ["h1-s1", "s1-s3", "s3-s2"], 2: ["h1-s1", "s3-s1"], 3: ["h1-s1", "s1-s4"]}
    (gap,) = failure_gaps([log], [("s1-s3", down)], paths)
    assert gap.flows == (1,) and gap.gap_ms == pytest.approx(31.0)
    (idle,) = failure_gaps([log], [("s1-s3", START + 600 * MS)], paths)
    assert idle.gap_ms is None and idle.flows == ()
