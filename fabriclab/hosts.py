"""The hosts' side of a run: one NIC emulator (traffic/nic.py) per host, in its namespace.

Every NIC is started, and the run waits for every NIC's "ready" line (its socket is
open, its addresses learned from the SA); only then does each get the same start time,
a little in the future (`--start-at -`, on its stdin). So the collective starts at once
everywhere whatever each process's start-up took, and no frame reaches a host before
its NIC listens (a capture would see it, the NIC never). Then the run waits for all of
them to finish (`--until-done`), and collects their summaries and logs.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from topologies import remote
from topologies.ledger import Ledger
from traffic.flow_control import FlowControl

ROOT = Path(__file__).resolve().parent.parent
# from the moment every NIC is ready to the common start: handing each its start time
START_MARGIN_S = 0.3
START_MARGIN_PER_NIC_S = 0.01


@dataclass(frozen=True)
class NicSettings:
    mode: FlowControl
    rate_pps: int
    frame_bytes: int
    buffer: int
    xoff: int
    xon: int
    credit_coalesce: int
    transport: str = "ud"
    rc_options: tuple[str, ...] = ()  # RC transport options on the NIC's command line


@dataclass
class NicFleet:
    """The NIC processes of one run."""

    log_dir: Path
    ledger: Ledger
    procs: dict[str, subprocess.Popen] = field(default_factory=dict)
    control: dict[str, Path] = field(default_factory=dict)
    # Control sockets live in a short private directory: a unix socket path
    # has at most 107 bytes, and result directories can be deep.
    control_dir: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="fl-nic-")))
    stalled_after_s: float | None = None  # wait() stopped NICs on which nothing moved
    hosts: dict = field(default_factory=dict)
    # Supervised servers: copies what the NICs wrote there into log_dir (EmulatedNetwork's
    # collect_files); called once they have all finished.
    collect: object = None

    def start(self, hosts: dict, flows: dict[str, Path], lids: dict[str, int] | None,
              macs: dict[str, str], settings: NicSettings, duration_s: float,
              margin_s: float = START_MARGIN_S) -> float:
        """Start a NIC on every host in `flows`; returns the common start time (epoch s),
        `margin_s` (plus 10 ms per NIC) after every NIC said it is ready. `lids` None: the
        NICs learn their LIDs (and their peers' addresses) from the SA, as their FLOWS.json
        ask."""
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self.hosts = hosts
        for name in flows:  # a supervised host maps the control sockets to its server
            server = getattr(hosts[name], "remote_host", None)
            if server is not None:
                server.map_root(self.control_dir)
        for name, flows_path in sorted(flows.items()):
            control = self.control_dir / f"{name}.ctl"
            self.control[name] = control
            cmd = [sys.executable, "-m", "traffic.nic_cli",
                   "--iface", f"{self.ledger.prefix}{name}-eth0",
                   "--mode", settings.mode.value, "--rate-pps", str(settings.rate_pps),
                   "--frame-bytes", str(settings.frame_bytes), "--buffer", str(settings.buffer),
                   "--xoff", str(settings.xoff), "--xon", str(settings.xon),
                   "--credit-coalesce", str(settings.credit_coalesce),
                   "--transport", settings.transport, *settings.rc_options,
                   "--flows", str(flows_path), "--log-dir", str(self.log_dir),
                   "--duration", str(duration_s), "--start-at", "-",
                   "--until-done", "--control", str(control), "--name", name,
                   "--mac", macs[name], *(["--lid", str(lids[name])] if lids else [])]
            proc = hosts[name].popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, cwd=str(ROOT), text=True)
            self.procs[name] = proc
            remote.record(self.ledger, proc, f"NIC on {name}")
        for name, proc in self.procs.items():
            line = proc.stdout.readline()
            if '"ready"' not in line:
                try:
                    proc.wait(timeout=5)  # an error exit: its message is on stderr
                except subprocess.TimeoutExpired:
                    pass
                err = proc.stderr.read() if proc.poll() is not None else ""
                raise RuntimeError(f"NIC on {name} did not start: {line.strip()} {err.strip()}")
        start_at = time.time() + margin_s + START_MARGIN_PER_NIC_S * len(flows)
        for proc in self.procs.values():
            try:
                proc.stdin.write(f"start_at {start_at:.6f}\n")
                proc.stdin.close()
            except (BrokenPipeError, remote.RemoteError):  # it exited since: wait() says how
                pass
        return start_at

    def progress(self) -> dict[str, int]:
        """Frames sent, received and dropped so far, summed over the running NICs."""
        total = {"sent": 0, "received": 0, "nic_drops": 0}
        for name, proc in self.procs.items():
            if proc.poll() is not None:
                continue
            try:
                stats = self.command(name, "stats", 0.5)["stats"]
            except Exception:  # noqa: BLE001 - a NIC busy finishing: no progress figure
                continue
            total["sent"] += stats.get("sent", 0)
            total["received"] += stats.get("received", 0)
            total["nic_drops"] += stats.get("rx_dropped", 0)
        return total

    def wait(self, timeout_s: float, on_progress=None, stall_s: float = 0.0,
             start_at: float | None = None) -> dict[str, dict]:
        """Wait for every NIC to finish (or stop it at the timeout); their summaries.

        `on_progress(counts)` is called about twice a second while they run. With
        `stall_s`, NICs that neither sent nor received a frame for that long after
        `start_at` (epoch s) are told to stop (they still write their logs):
        `stalled_after_s` then says how long nothing had moved."""
        deadline = time.monotonic() + timeout_s
        problems = {}
        last, since = None, time.monotonic()
        while (time.monotonic() < deadline
               and any(p.poll() is None for p in self.procs.values())):
            if on_progress is None and not stall_s:
                break
            counts = self.progress()
            if on_progress is not None:
                on_progress(counts)
            moved = (counts["sent"], counts["received"])
            if moved != last or (start_at is not None and time.time() < start_at):
                last, since = moved, time.monotonic()
            elif stall_s and time.monotonic() - since > stall_s:
                self.stalled_after_s = round(time.monotonic() - since, 1)
                self._stop_all()
                break
            time.sleep(0.5)
        for name, proc in self.procs.items():
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                remote.stop(proc)  # SIGTERM: the NIC still writes its logs
                problems[name] = "did not finish in time"
            if proc.returncode not in (0, None, -15):
                problems[name] = (proc.stderr.read() or f"exit {proc.returncode}").strip()
        if callable(self.collect):
            self.collect()
        summaries = {}
        for name in self.procs:
            path = self.log_dir / f"{name}.summary.json"
            if path.exists():
                summaries[name] = json.loads(path.read_text())
            else:
                summaries[name] = {"name": name, "missing": True,
                                   "problem": problems.get(name, "no summary written")}
        return summaries

    def command(self, name: str, command: str, timeout: float = 5.0) -> dict:
        """One command to a NIC's control socket: here, or through its server's
        supervisor (`call_unix`) on a supervised server."""
        from traffic.faults import FaultError, NicControl

        server = getattr(self.hosts.get(name), "remote_host", None)
        if server is None:
            return NicControl(str(self.control[name]), timeout=timeout).send(command)
        answer = json.loads(server.call_unix(str(self.control[name]), command, timeout))
        if not answer.get("ok"):
            raise FaultError(f"NIC control {name}: {command!r}: {answer.get('error')}")
        return answer

    def _stop_all(self) -> None:
        for name, proc in self.procs.items():
            if proc.poll() is None:
                try:
                    self.command(name, "stop", 1.0)
                except Exception:  # noqa: BLE001 - the timeout below stops it by PID
                    pass

    def sent_logs(self) -> list[Path]:
        return sorted(self.log_dir.glob("*.sent.csv"))

    def recv_logs(self) -> list[Path]:
        return sorted(self.log_dir.glob("*.recv.csv"))

    def stop(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                remote.stop(proc)
        shutil.rmtree(self.control_dir, ignore_errors=True)
