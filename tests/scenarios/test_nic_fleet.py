"""The run's view of its NICs: live progress and the stall detector (no Mininet).

Fake NICs answer on a control socket in the NIC emulator's format
({"ok": true, "stats": <summary>}), so NicFleet is tested without processes.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from pathlib import Path

from fabriclab.hosts import NicFleet


class FakeNic:
    """A control socket and a process handle; `sent` grows by `step` per stats query."""

    def __init__(self, path, step: int, finish_after_s: float | None = None) -> None:
        self.sent, self.step = 0, step
        self.stopped = False
        self.pid = -1
        self.stderr = None
        self.finish_at = None if finish_after_s is None else time.monotonic() + finish_after_s
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(str(path))
        self.server.listen(8)
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            with conn:
                command = conn.recv(4096).decode().strip()
                if command == "stats":
                    self.sent += self.step
                    reply = {"ok": True, "stats": {"sent": self.sent, "received": self.sent,
                                                   "rx_dropped": 0}}
                else:
                    self.stopped = command == "stop" or self.stopped
                    reply = {"ok": True, "command": command}
                conn.sendall(json.dumps(reply).encode() + b"\n")

    @property
    def returncode(self) -> int | None:
        return self.poll()

    def poll(self) -> int | None:
        done = self.finish_at is not None and time.monotonic() >= self.finish_at
        return 0 if self.stopped or done else None

    def wait(self, timeout: float | None = None) -> int | None:
        return self.poll()

    def close(self) -> None:
        self.server.close()


def add_nic(fleet: NicFleet, name: str, step: int,
            finish_after_s: float | None = None) -> FakeNic:
    fleet.control[name] = fleet.control_dir / f"{name}.ctl"
    nic = fleet.procs[name] = FakeNic(fleet.control[name], step, finish_after_s)
    return nic


def test_progress_sums_the_frames_the_nics_report(tmp_path):
    fleet = NicFleet(tmp_path / "logs", ledger=None)
    h1 = add_nic(fleet, "h1", step=3)
    h2 = add_nic(fleet, "h2", step=4)
    try:
        counts = fleet.progress()
    finally:
        h1.close()
        h2.close()
    assert counts == {"sent": 7, "received": 7, "nic_drops": 0}


def test_stall_detector_leaves_nics_that_keep_moving_alone(tmp_path):
    fleet = NicFleet(tmp_path / "logs", ledger=None)
    nic = add_nic(fleet, "h1", step=10, finish_after_s=2.5)
    try:
        fleet.wait(10, stall_s=1.0, start_at=time.time())
    finally:
        nic.close()
    assert fleet.stalled_after_s is None
    assert not nic.stopped


def test_stall_detector_stops_nics_on_which_nothing_moves(tmp_path):
    fleet = NicFleet(tmp_path / "logs", ledger=None)
    nic = add_nic(fleet, "h1", step=0)
    try:
        fleet.wait(10, stall_s=1.0, start_at=time.time())
    finally:
        nic.close()
    assert nic.stopped
    assert fleet.stalled_after_s is not None and fleet.stalled_after_s >= 1.0


class LateHost:
    """A host whose 'NIC' says ready after `delay_s`, then writes the start line it was
    given and the time it said ready to `out`."""

    def __init__(self, delay_s: float, out: Path) -> None:
        self.delay_s, self.out = delay_s, out

    def popen(self, cmd, **kwargs):
        import subprocess
        import sys

        assert cmd[cmd.index("--start-at") + 1] == "-"
        script = (f"import json, sys, time; time.sleep({self.delay_s!r}); "
                  "ready = time.time(); print(json.dumps({'ready': True}), flush=True); "
                  "line = sys.stdin.readline(); "
                  f"open({str(self.out)!r}, 'w').write(json.dumps([ready, line]))")
        kwargs.pop("cwd", None)
        return subprocess.Popen([sys.executable, "-c", script], **kwargs)


def test_the_start_time_is_handed_out_once_every_nic_listens(tmp_path):
    from fabriclab.hosts import NicSettings
    from traffic.flow_control import FlowControl

    fleet = NicFleet(tmp_path / "logs", ledger=None)
    fleet.ledger = type("L", (), {"prefix": "", "add_process": lambda *a: None})()
    hosts = {"h1": LateHost(0.0, tmp_path / "h1.out"), "h2": LateHost(1.0, tmp_path / "h2.out")}
    settings = NicSettings(FlowControl.LOSSY, 1000, 100, 64, 24, 12, 4)
    start_at = fleet.start(hosts, {"h1": tmp_path / "x", "h2": tmp_path / "y"}, None,
                           {"h1": "m1", "h2": "m2"}, settings, 5)
    for proc in fleet.procs.values():
        proc.wait(5)
    (ready1, line1), (ready2, line2) = (json.loads((tmp_path / f"{h}.out").read_text())
                                        for h in ("h1", "h2"))
    assert line1 == line2 == f"start_at {start_at:.6f}\n"
    assert start_at > max(ready1, ready2)  # the quick NIC did not start before the slow one
