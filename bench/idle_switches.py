"""CPU use of 20 idle embedded switches (no interfaces, no traffic), in % of one core."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

from topologies.ledger import stop_pid
from topologies.ports import free_tcp_port

SWITCHES = 20
WINDOW_S = 5.0
TICKS = os.sysconf("SC_CLK_TCK")


def _cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def _wait_listening(port: int, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(f"a switch did not listen on port {port} within {timeout:.0f} s")


def main() -> dict[str, float]:
    procs = []
    ports = []
    try:
        for n in range(SWITCHES):
            ports.append(free_tcp_port())
            cmd = [sys.executable, "-m", "p4switch.cli", "--device-id", str(n + 1), "--no-p4",
                   "--grpc-server-addr", f"127.0.0.1:{ports[-1]}"]
            procs.append(subprocess.Popen(cmd, stdout=subprocess.DEVNULL,
                                          stderr=subprocess.DEVNULL))
        for port in ports:  # start-up must not overlap the window
            _wait_listening(port)
        time.sleep(1.0)
        dead = [p.pid for p in procs if p.poll() is not None]
        if dead:
            raise RuntimeError(f"{len(dead)} switches exited during start-up")
        before = sum(_cpu_ticks(p.pid) for p in procs)
        time.sleep(WINDOW_S)
        after = sum(_cpu_ticks(p.pid) for p in procs)
    finally:
        for p in procs:
            stop_pid(p.pid)
    percent = 100.0 * (after - before) / TICKS / WINDOW_S
    print(f"   {SWITCHES} idle switches: {percent:.1f}% of one core")
    return {"idle_switches": SWITCHES, "idle_switches_cpu_percent": round(percent, 2)}
