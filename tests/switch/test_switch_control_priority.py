"""Control-plane writes before packets (p4switch/control_priority.py, Switch._control).

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

from p4switch.control_priority import ControlPriorityError, set_thread_nice
from p4switch.switch import Switch
from p4switch.switch_fastpath import RX_BATCH
from p4switch.traffic_manager import _WIRE

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


def _thread_nices(pid: int) -> list[int]:
    out = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        stat = (task / "stat").read_text()
        out.append(int(stat.rsplit(")", 1)[1].split()[16]))  # field 19: nice
    return out


@pytest.mark.skipif(os.geteuid() != 0, reason="lowering a nice value needs CAP_SYS_NICE")
def test_control_threads_run_at_the_given_nice_and_the_data_plane_keeps_its_own():
    p = subprocess.Popen([sys.executable, "-m", "p4switch.cli", "--no-p4", "--grpc-server-addr",
                          f"127.0.0.1:{free_port()}", "--control-nice", "-7"],
                         stderr=subprocess.PIPE, text=True, cwd=REPO)
    try:
        assert "running" in p.stderr.readline()
        nices = _thread_nices(p.pid)
        base = os.getpriority(os.PRIO_PROCESS, 0)
        # main thread, gRPC threads: -7; the data-plane thread (started before): unchanged
        assert nices.count(-7) >= 2 and base in nices, nices
    finally:
        p.terminate()
        p.wait(5)
