"""tcpdump on one interface, possibly inside a network namespace, with drop accounting.

    with Capture("h2-eth0", "results/run/h2.pcap", spawn=["ip", "netns", "exec", "h2"]) as cap:
        ...  # traffic
    print(cap.stats.dropped_by_kernel)

`spawn` says where tcpdump runs: None (this namespace), a command prefix (a
list like ["ip", "netns", "exec", "h2"]; the prefix must exec tcpdump so that
its PID is tcpdump's), or a callable with subprocess.Popen's signature such as
Mininet's `host.popen`. `start()` returns only once tcpdump reports
"listening on", so no early frame is missed; `stop()` sends SIGINT to that
PID (never a kill by name) and parses tcpdump's closing statistics: frames
the kernel dropped are capture drops, and a run with any is reported partial.
"""

from __future__ import annotations

import re
import signal
import subprocess
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

CAPTURE_FILTER = "ether proto 0x88b5 or ether proto 0x8808"
Spawner = Callable[..., subprocess.Popen]


class CaptureError(Exception):
    """tcpdump did not start or did not stop cleanly; carries its stderr."""


@dataclass(frozen=True)
class CaptureStats:
    """tcpdump's own counts at exit (None where it did not print one)."""

    path: str
    captured: int | None
    received_by_filter: int | None
    dropped_by_kernel: int | None
    dropped_by_interface: int | None = None

    @property
    def drops(self) -> int:
        return (self.dropped_by_kernel or 0) + (self.dropped_by_interface or 0)


def tcpdump_command(iface: str, path: Path | str, snaplen: int = 256, buffer_kib: int = 8192,
                    direction: str | None = None, bpf: str = CAPTURE_FILTER) -> list[str]:
    """The tcpdump command line: packet-buffered (-U), immediate delivery, fabric+PFC only.

    `-Z root` keeps tcpdump from dropping privileges to a user that could not
    write into a root-owned results directory. `direction` "in" captures only
    received frames (a receiver's own transmissions are then not counted).
    """
    cmd = ["tcpdump", "-i", iface, "-w", str(path), "-U", "--immediate-mode",
           "-B", str(buffer_kib), "-s", str(snaplen), "-Z", "root"]
    if direction:
        cmd += ["-Q", direction]
    return cmd + [bpf]


class Capture:
    """One tcpdump process writing one pcap; see the module doc."""

    def __init__(self, iface: str, path: Path | str,
                 spawn: Sequence[str] | Spawner | None = None, *, snaplen: int = 256,
                 buffer_kib: int = 8192, direction: str | None = None) -> None:
        self.iface = iface
        self.path = Path(path)
        self.command = tcpdump_command(iface, self.path, snaplen, buffer_kib, direction)
        self._spawn = spawn
        self._proc: subprocess.Popen | None = None
        self._stderr: list[str] = []
        self._listening = False
        self._start_settled = threading.Event()
        self._reader: threading.Thread | None = None
        self.stats: CaptureStats | None = None

    @property
    def process(self):
        """The tcpdump process (a Popen, or the spawner's Popen-like handle)."""
        return self._proc

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    def start(self, timeout: float = 10.0) -> Capture:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        kwargs = {"stdin": subprocess.DEVNULL, "stdout": subprocess.DEVNULL,
                  "stderr": subprocess.PIPE}
        if callable(self._spawn):
            self._proc = self._spawn(self.command, **kwargs)
        else:
            self._proc = subprocess.Popen([*(self._spawn or ()), *self.command], **kwargs)
        self._reader = threading.Thread(target=self._read_stderr, daemon=True,
                                        name=f"tcpdump-{self.iface}")
        self._reader.start()
        self._start_settled.wait(timeout)
        if not self._listening:
            self._terminate()
            raise CaptureError(f"tcpdump on {self.iface} did not start listening within "
                               f"{timeout:g}s: {self.stderr_text().strip() or 'no output'}")
        return self

    def _read_stderr(self) -> None:
        assert self._proc and self._proc.stderr
        for raw in self._proc.stderr:
            line = raw.decode(errors="replace")
            self._stderr.append(line)
            if "listening on" in line:
                self._listening = True
                self._start_settled.set()  # start() may return; keep collecting stderr
        self._start_settled.set()  # tcpdump exited (before or after listening)

    def stderr_text(self) -> str:
        return "".join(self._stderr)

    def stop(self, timeout: float = 10.0) -> CaptureStats:
        """SIGINT by PID, wait, and parse tcpdump's statistics."""
        if self._proc is None:
            raise CaptureError(f"capture on {self.iface} was never started")
        if self._proc.poll() is None:
            self._proc.send_signal(signal.SIGINT)  # by PID, wherever the spawner started it
            try:
                self._proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self._terminate()
                raise CaptureError(f"tcpdump on {self.iface} (pid {self._proc.pid}) ignored "
                                   f"SIGINT for {timeout:g}s and was killed") from None
        if self._reader:
            self._reader.join(timeout)
        self.stats = parse_tcpdump_stats(self.stderr_text(), str(self.path))
        return self.stats

    def _terminate(self) -> None:
        if self._proc and self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait()

    def __enter__(self) -> Capture:
        return self.start()

    def __exit__(self, *exc) -> None:
        if self._proc is not None and self.stats is None:
            if exc[0] is None:
                self.stop()
            else:
                self._terminate()


_STAT_PATTERNS = {
    "captured": r"(\d+) packets? captured",
    "received_by_filter": r"(\d+) packets? received by filter",
    "dropped_by_kernel": r"(\d+) packets? dropped by kernel",
    "dropped_by_interface": r"(\d+) packets? dropped by interface",
}


def parse_tcpdump_stats(stderr: str, path: str = "") -> CaptureStats:
    found = {}
    for key, pattern in _STAT_PATTERNS.items():
        m = re.search(pattern, stderr)
        found[key] = int(m[1]) if m else None
    return CaptureStats(path=path, **found)
