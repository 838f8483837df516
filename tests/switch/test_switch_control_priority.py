"""Control-plane writes before packets (p4switch/control_priority.py, Switch._control).
Tests that change scheduling need root (CAP_SYS_NICE) and skip otherwise.

The timing of a switchover write under a packet flood, with and without these
knobs, is measured in tests/controller/test_switchover_priority.py.
"""

from __future__ import annotations

import heapq
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from test_switch_cli import REPO, free_port, run_cli

from p4switch.control_priority import (
    ControlPriorityError,
    normal_scheduling,
    set_thread_nice,
    set_thread_realtime,
)
from p4switch.switch import Switch
from p4switch.switch_fastpath import RX_BATCH
from p4switch.traffic_manager import _WIRE

pytestmark = pytest.mark.timing  # asserts on elapsed time (conftest: the serial part)

FRAME_S = 0.02  # one slow "frame": a batch of RX_BATCH takes over a second


def _slow_recv(count: list[int]):
    def recv(_bufsize: int) -> bytes:
        time.sleep(FRAME_S)
        count[0] += 1
        return b"\x00" * 64
    return recv


def test_a_control_write_takes_the_lock_between_two_frames_of_a_batch():
    sw = Switch({})
    batch = sw._batch_path(None)  # no program: frames are read and dropped
    frames, started = [0], threading.Event()

    def packet_loop() -> None:
        with sw._lock:  # as the data-plane thread holds it for a whole epoll round
            started.set()
            batch(_slow_recv(frames), 2048, 1, time.monotonic(), 0, None)

    loop = threading.Thread(target=packet_loop)
    loop.start()
    started.wait(5)
    time.sleep(3 * FRAME_S)
    t0 = time.monotonic()
    with sw._control():
        waited = time.monotonic() - t0
        at = frames[0]
    loop.join(10)
    batch_s = RX_BATCH * FRAME_S
    # in at the next frame boundary, not after the batch; and the batch then finished
    assert waited < batch_s / 4, f"waited {waited * 1e3:.0f} ms of a {batch_s:.1f} s batch"
    assert at < RX_BATCH and frames[0] == RX_BATCH


def test_due_timers_let_a_control_write_in_between_two_of_them():
    sw = Switch({})
    sent, started = [], threading.Event()

    def slow_send(port: int, frame: bytes) -> bool:  # one slow frame leaving a port
        time.sleep(FRAME_S)
        sent.append(frame)
        return True

    sw.tm.send = slow_send
    for i in range(40):  # frames on the wire, all due
        heapq.heappush(sw.tm.timers, (0.0, i, _WIRE, (1, bytes([i]))))

    def packet_loop() -> None:
        with sw._lock:
            started.set()
            sw.tm.run_due(1.0)

    loop = threading.Thread(target=packet_loop)
    loop.start()
    started.wait(5)
    time.sleep(3 * FRAME_S)
    t0 = time.monotonic()
    with sw._control():
        waited = time.monotonic() - t0
        at = len(sent)
    loop.join(10)
    assert waited < 10 * FRAME_S, f"waited {waited * 1e3:.0f} ms for 40 x {FRAME_S} s timers"
    assert at < 40 and len(sent) == 40
    assert sw._control_pending == [0] and sw._control_idle.is_set()


def test_nice_out_of_range_is_refused():
    with pytest.raises(ControlPriorityError, match="-20..19"):
        set_thread_nice(-40)


def test_bad_switch_interval_and_nice_are_one_error_line_and_exit_1():
    r = run_cli("--no-p4", "--grpc-server-addr", f"127.0.0.1:{free_port()}",
                "--switch-interval-us", "0")
    assert r.returncode == 1
    assert r.stderr.strip() == ("fabriclab-switch: error: --switch-interval-us must be "
                                "positive, got 0.0")
    r = run_cli("--no-p4", "--grpc-server-addr", f"127.0.0.1:{free_port()}",
                "--control-nice", "40")
    assert r.returncode == 1
    assert r.stderr.strip() == "fabriclab-switch: error: --control-nice must be in -20..19, got 40"


def _threads(pid: int) -> list[tuple[int, int]]:
    """(scheduling policy, nice) of every thread of a process."""
    out = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        out.append((int(fields[38]), int(fields[16])))  # stat fields 41 (policy), 19 (nice)
    return out


@pytest.mark.skipif(os.geteuid() != 0, reason="real-time and lower nice need CAP_SYS_NICE")
def test_control_threads_run_real_time_and_the_data_plane_keeps_normal_scheduling():
    p = subprocess.Popen([sys.executable, "-m", "p4switch.cli", "--no-p4", "--grpc-server-addr",
                          f"127.0.0.1:{free_port()}", "--control-nice", "-7"],
                         stderr=subprocess.PIPE, text=True, cwd=REPO)
    try:
        assert "running" in p.stderr.readline()
        threads = _threads(p.pid)
        base = os.getpriority(os.PRIO_PROCESS, 0)
        # main, gRPC and port-status threads: SCHED_FIFO (1) and nice -7; the data-plane
        # thread (started before them): SCHED_OTHER (0) at the process's nice
        assert sum(1 for t in threads if t == (os.SCHED_FIFO, -7)) >= 2, threads
        assert (os.SCHED_OTHER, base) in threads, threads
    finally:
        p.terminate()
        p.wait(5)


@pytest.mark.skipif(os.geteuid() != 0, reason="real-time needs CAP_SYS_NICE")
def test_long_work_on_a_real_time_thread_runs_at_normal_scheduling_then_returns():
    seen = {}

    def control_thread() -> None:
        seen["note"] = set_thread_realtime(5)
        with normal_scheduling():
            seen["inside"] = os.sched_getscheduler(0)
        seen["after"] = (os.sched_getscheduler(0), os.sched_getparam(0).sched_priority)

    t = threading.Thread(target=control_thread)  # its own thread: the test's stays as it is
    t.start()
    t.join(5)
    assert seen == {"note": None, "inside": os.SCHED_OTHER, "after": (os.SCHED_FIFO, 5)}


def test_rt_priority_out_of_range_is_refused():
    with pytest.raises(ControlPriorityError, match="0..99"):
        set_thread_realtime(120)
    r = run_cli("--no-p4", "--grpc-server-addr", f"127.0.0.1:{free_port()}",
                "--control-rt-priority", "120")
    assert r.returncode == 1
    assert r.stderr.strip() == ("fabriclab-switch: error: --control-rt-priority must be in "
                                "0..99, got 120")
