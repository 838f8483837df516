"""An idle switch is idle: no timers or polling when nothing needs them.

Five `p4switch.cli --no-p4` processes (no interfaces, so no root needed), CPU
time (utime + stime from /proc/PID/stat) sampled over 2 s once all of them
report "running". The bound (5% of a core each) is far above what an idle
switch uses (the gRPC core's own 200 ms poll, ~0.1%) so that a busy CI machine
does not fail it, and far below what a switch polling every few ms would use.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

import pytest

pytestmark = pytest.mark.timing  # asserts on elapsed time (conftest: the serial part)

REPO = __file__.rsplit("/tests/", 1)[0]
SWITCHES = 5
WINDOW_S = 2.0
BOUND_PER_SWITCH = 0.05  # of one core
TICK = os.sysconf("SC_CLK_TCK")


def _free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def _cpu_s(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc")
def test_idle_switches_use_almost_no_cpu():
    procs = []
    try:
        for n in range(SWITCHES):
            procs.append(subprocess.Popen(
                [sys.executable, "-m", "p4switch.cli", "--no-p4", "--device-id", str(n + 1),
                 "--grpc-server-addr", f"127.0.0.1:{_free_port()}"],
                stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, cwd=REPO))
        for p in procs:  # start-up (imports, gRPC) must not count as idle time
            line = p.stderr.readline()
            assert "running" in line, f"switch did not start: {line!r}"
        time.sleep(0.3)
        before = [_cpu_s(p.pid) for p in procs]
        t0 = time.monotonic()
        time.sleep(WINDOW_S)
        used = [_cpu_s(p.pid) - b for p, b in zip(procs, before)]
        elapsed = time.monotonic() - t0
        share = [u / elapsed for u in used]
        assert all(p.poll() is None for p in procs)
        assert max(share) < BOUND_PER_SWITCH, f"idle CPU per switch: {share}"
    finally:
        for p in procs:
            if p.poll() is None:
                p.terminate()
        for p in procs:
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
