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


def _logs(tmp_path, sends, recvs):
    sent = tmp_path / "h1.sent.csv"
    sent.write_text("# v1\nflow,psn,send_ns\n" + "".join(
        f"{flow},{psn},{START + int(t * MS)}\n" for flow, psn, t in sends))
    recv = tmp_path / "h2.recv.csv"
    recv.write_text("# v1\nflow,psn,send_ns,recv_ns,slid,coll_id,step,chunk,admitted\n" + "".join(
        f"{flow},{psn},0,{START + int(t * MS)},1,1,0,0,{adm}\n" for flow, psn, t, adm in recvs))
    return [sent], [recv]


PATHS = {1: ["h1-s1", "s1-s3", "s3-s2"], 2: ["h1-s1", "s3-s1"], 3: ["h1-s1", "s1-s4"]}


def test_failure_gap_is_the_longest_wait_of_a_frame_sent_around_the_failure(tmp_path):
    sends = [(1, 0, 380), (1, 1, 490), (1, 2, 498), (1, 3, 520),  # 2 lost on the link, 3 sent
             (1, 2, 560), (1, 3, 561),  # into the broken path; both retransmitted
             (2, 0, 300),  # crosses the link but long before: not hit
             (3, 0, 499)]  # around the failure but elsewhere
    recvs = [(1, 0, 381, 1), (1, 1, 491, 1), (1, 2, 562, 1), (1, 3, 563, 1),
             (2, 0, 301, 1), (3, 0, 800, 1)]
    sent, recv = _logs(tmp_path, sends, recvs)
    (gap,) = failure_gaps(sent, recv, [("s1-s3", START + 500 * MS)], PATHS)
    assert gap.flows == (1,) and gap.recovered
    assert gap.gap_ms == pytest.approx(562 - 498)  # PSN 2: first sent at 498, delivered 562
    (idle,) = failure_gaps(sent, recv, [("s1-s3", START + 1200 * MS)], PATHS)
    assert idle.gap_ms is None and idle.flows == () and idle.recovered


def test_a_frame_sent_into_the_broken_path_and_never_delivered_is_not_recovered(tmp_path):
    sent, recv = _logs(tmp_path, [(1, 0, 480), (1, 1, 510)],
                       [(1, 0, 481, 1), (1, 1, 600, 2)])  # PSN 1 discarded, never accepted
    (gap,) = failure_gaps(sent, recv, [("s3-s1", START + 500 * MS)], PATHS)
    assert gap.flows == (1,) and not gap.recovered and gap.gap_ms == pytest.approx(1.0)


def test_the_worst_verdict_of_several_runs():
    from traffic.verdict import worst

    assert worst(["pass", "stalled", "incomplete"]) == "stalled"
    assert worst(["pass", "fail", "stalled"]) == "fail"
    assert worst(["partial", "pass"]) == "partial"
    assert worst([]) == "error"
    assert worst(["pass", "something new"]) == "something new"


def test_a_job_without_faults_is_its_own_fault_free_run():
    from fabriclab import scenario as sc
    from fabriclab.plan import plan
    from fabriclab.training_job import figures

    data = {"name": "job", "topology": "line:2",
            "traffic": {"pattern": "allreduce-ring", "transport": "rc"},
            "training": {"iterations": 4, "compute_ms": 50.0}}
    m = figures(plan(sc.parse(data, "job")), {"traffic_start_ns": START, "nics": BASE},
                None)["training"]["job"]
    assert m.parallel_efficiency == pytest.approx(1.0)  # was None: "no fault-free run"
    assert m.baseline_iteration_ms == pytest.approx(100.0) and not m.problems
    data["faults"] = [{"at_s": 0.1, "kind": "link_down", "target": "s1-s2"}]
    faulted = figures(plan(sc.parse(data, "job")), {"traffic_start_ns": START, "nics": BASE},
                      None)["training"]["job"]
    assert faulted.parallel_efficiency is None and faulted.problems
