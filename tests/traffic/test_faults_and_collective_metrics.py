"""Fault schedules, the NIC control client, and collective / recovery metrics."""

from __future__ import annotations

import os
import socket
import threading
import time

import pytest

from traffic.faults import (
    FaultError,
    FaultSchedule,
    Hook,
    LinkDown,
    LinkEnd,
    NicCommand,
    NicControl,
)
from traffic.timing import bandwidth, collective_times, recovery_gaps


def test_faults_run_in_time_order_and_record_when_and_errors():
    calls = []
    schedule = FaultSchedule([
        (0.06, Hook("restart s1", lambda: calls.append("restart"))),
        (0.02, Hook("kill s1", lambda: calls.append("kill"))),
        (0.04, LinkDown([LinkEnd("nct-no-such-if", prefix=("true", "--"))])),
        (0.05, LinkDown([LinkEnd("nct-no-such-if")])),
    ])
    start = time.time_ns()
    events = schedule.start(start).join(5)
    assert calls == ["kill", "restart"]
    assert [e.name for e in events] == ["kill s1", "link_down nct-no-such-if",
                                        "link_down nct-no-such-if", "restart s1"]
    assert events[0].started_ns - start >= 20e6
    assert events[1].error == ""  # `true -- ip link ...` succeeds: the prefix is honoured
    assert "nct-no-such-if" in events[2].error  # a failing fault is recorded, not raised
    assert schedule.first("restart").at_s == 0.06


@pytest.mark.timing
def test_both_local_ends_of_a_link_go_down_at_the_same_time_and_errors_name_each():
    slow = ("sh", "-c", "sleep 0.4", "sh")  # `sh -c CMD sh ip link ...`: CMD alone runs
    started = time.monotonic()
    LinkDown([LinkEnd("a", prefix=slow), LinkEnd("b", prefix=slow)])()
    assert time.monotonic() - started < 0.7  # together, not 0.8 s one after the other
    bad = ("sh", "-c", "echo refused >&2; exit 3", "sh")
    with pytest.raises(FaultError, match="ip link set dev a down: refused; .*dev b down: refused"):
        LinkDown([LinkEnd("a", prefix=bad), LinkEnd("b", prefix=bad)])()


def test_link_faults_run_real_time_and_hooks_do_not(monkeypatch):
    seen = {}
    end = LinkEnd("x", run=lambda argv: seen.setdefault("link", os.sched_getscheduler(0)))
    schedule = FaultSchedule([
        (0.0, LinkDown([end])),
        (0.01, Hook("restart s1", lambda: seen.setdefault("hook", os.sched_getscheduler(0)))),
    ], rt_priority=20)
    events = schedule.start().join(5)
    assert [e.error for e in events] == ["", ""]
    assert seen["hook"] == os.SCHED_OTHER  # a restarted switch must not inherit it
    if schedule.notes:  # not permitted here (no CAP_SYS_NICE): said once, runs as before
        assert seen["link"] == os.SCHED_OTHER and schedule.notes[0].startswith("SCHED_FIFO 20:")
    else:
        assert seen["link"] == os.SCHED_FIFO


def test_nic_control_sends_one_line_and_reads_one_json_reply(tmp_path):
    path = str(tmp_path / "nic.sock")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(1)
    got = []

    def serve():
        for _ in range(2):
            conn, _ = server.accept()
            line = conn.makefile().readline().strip()
            got.append(line)
            ok = line != "bogus"
            conn.sendall(b'{"ok": true}\n' if ok else b'{"ok": false, "error": "unknown"}\n')
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    NicCommand(path, "drop_credits 3")()
    with pytest.raises(FaultError, match="unknown"):
        NicControl(path).send("bogus")
    thread.join(2)
    server.close()
    assert got == ["drop_credits 3", "bogus"]


def test_collective_completion_time_spans_first_send_to_last_completion():
    ranks = [{"collectives": {"1": {"start_ns": 1_000_000, "end_ns": 9_000_000,
                                    "complete": True}}},
             {"collectives": {"1": {"start_ns": 2_000_000, "end_ns": 11_000_000,
                                    "complete": True},
                              "2": {"start_ns": 12_000_000, "end_ns": None,
                                    "complete": False}}}]
    times = collective_times(ranks)
    assert times["1"]["cct_ms"] == 10.0 and times["1"]["complete"]
    assert times["2"]["cct_ms"] is None


def test_bus_bandwidth_follows_nccl_tests():
    bw = bandwidth(8_000_000, 10.0, "ring_allreduce", 4)
    assert bw["algbw"] == pytest.approx(8e8)
    assert bw["busbw"] == pytest.approx(8e8 * 2 * 3 / 4)
    assert bandwidth(8_000_000, 10.0, "alltoall", 4)["busbw"] == pytest.approx(8e8 * 3 / 4)
    assert bandwidth(1, None, "alltoall", 4) == {"algbw": None, "busbw": None}


def test_recovery_gap_and_time_back_to_90_percent_goodput():
    ms = 1_000_000
    failure = 1000 * ms
    # 1 frame/ms before, nothing for 30 ms, then 1 frame/ms again
    times = [t * ms for t in range(800, 1000)] + [t * ms for t in range(1030, 1300)]
    r = recovery_gaps({7: times}, failure, window_ns=100 * ms)["7"]
    assert r["gap_ms"] == 31.0  # 999 ms -> 1030 ms
    assert r["recovery_ms"] == pytest.approx(30 + 89, abs=1)  # 90 frames in a 100 ms window
    assert recovery_gaps({7: times[:10]}, failure)["7"]["gap_ms"] is None


def test_recovery_gap_is_the_outage_after_frames_already_past_the_failed_link():
    ms = 1_000_000
    failure = 1000 * ms
    # frames beyond the failed link still arrive for 3 ms, then 41 ms of nothing
    times = [t * ms for t in range(900, 1003)] + [t * ms for t in range(1043, 1100)]
    assert recovery_gaps({7: times}, failure)["7"]["gap_ms"] == 41.0  # 1002 -> 1043 ms
    # a silence later than the horizon is not the failure's
    late = [t * ms for t in range(900, 1003)] + [t * ms for t in range(1003, 2500, 100)]
    assert recovery_gaps({7: late}, failure, horizon_ns=50 * ms)["7"]["gap_ms"] == 1.0
