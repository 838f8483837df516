"""bmv2's own runtime API (Thrift), for what its P4Runtime server does not do.

P4Runtime has no queue rate or depth, and simple_switch_grpc's P4Runtime
server refuses register reads and writes (UNIMPLEMENTED). bmv2's Thrift runtime
API, the one simple_switch_CLI and p4-utils use, has them: the emulated link
rate on bmv2 uses `set_queue_rate` / `set_queue_depth` through it
(topologies/link_rates.py) where the switch was built with Thrift (p4ref's
simple_switch_grpc is not; its simple_switch is, which the tests use).
`register_read` and `table_set_default` are there for the same switches
(tests/topologies/test_bmv2_thrift.py); runs configure fabric.p4 over
P4Runtime only.

`Bmv2Runtime` keeps one session open: `bmv2_cli_session.py` run by the Python
of the toolchain's `simple_switch_CLI` (it carries the Thrift bindings), one
command per line, so a command costs a Thrift round trip (about a millisecond),
not a CLI start (about half a second). The session loads the switch's JSON when
it starts: open it after the pipeline is pushed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
import time
from pathlib import Path

from controller.bmv2_cli_session import END_MARK

SESSION_SCRIPT = Path(__file__).with_name("bmv2_cli_session.py")


class Bmv2RuntimeError(RuntimeError):
    """bmv2's runtime CLI is missing, could not connect, or refused a command."""


def cli_toolchain() -> tuple[str, Path]:
    """(interpreter, bmv2 Python library dir) of the simple_switch_CLI on PATH."""
    cli = shutil.which("simple_switch_CLI")
    if cli is None:
        raise Bmv2RuntimeError("simple_switch_CLI is not on PATH (bmv2's runtime CLI)")
    real = Path(os.path.realpath(cli))
    first = real.read_text(errors="replace").splitlines()[0] if real.stat().st_size else ""
    interpreter = first[2:].strip().split()[0] if first.startswith("#!") else "python3"
    lib = real.parent.parent / "lib" / "python3-site-packages"
    if not lib.is_dir():  # a system install keeps the modules on the interpreter's path
        lib = real.parent
    return interpreter, lib


class Bmv2Runtime:
    """One open runtime-CLI session with a bmv2 switch's Thrift server."""

    def __init__(self, thrift_port: int, timeout: float = 10.0) -> None:
        self.thrift_port = thrift_port
        self.timeout = timeout
        interpreter, lib = cli_toolchain()
        self._lock = threading.Lock()
        self._proc = subprocess.Popen(
            [interpreter, str(SESSION_SCRIPT), str(lib), str(thrift_port)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            start_new_session=True)
        try:
            self._read_reply()
        except Bmv2RuntimeError:
            self.close()
            raise

    def _read_reply(self) -> str:
        deadline = time.monotonic() + self.timeout
        buf = b""
        mark = (END_MARK + "\n").encode()
        fd = self._proc.stdout.fileno()
        while not buf.endswith(mark):
            if time.monotonic() > deadline:
                raise Bmv2RuntimeError(f"bmv2 Thrift port {self.thrift_port}: no answer within "
                                       f"{self.timeout:g} s")
            chunk = os.read(fd, 65536)
            if not chunk:
                text = buf.decode(errors="replace").strip().splitlines()
                raise Bmv2RuntimeError(
                    f"bmv2 Thrift port {self.thrift_port}: runtime CLI session ended: "
                    + (text[-1] if text else "no output"))
            buf += chunk
        return buf[: -len(mark)].decode(errors="replace")

    def command(self, line: str) -> str:
        """Run one runtime-CLI command; Bmv2RuntimeError if bmv2 refused it."""
        with self._lock:
            if self._proc.poll() is not None:
                raise Bmv2RuntimeError(f"bmv2 Thrift port {self.thrift_port}: session closed")
            self._proc.stdin.write((line + "\n").encode())
            self._proc.stdin.flush()
            out = self._read_reply()
        bad = [s for s in out.splitlines() if s.startswith(("Error", "Invalid"))]
        if bad:
            raise Bmv2RuntimeError(f"bmv2 Thrift port {self.thrift_port}: {line!r}: {bad[0]}")
        return out

    def set_queue_rate(self, port: int, pps: int) -> None:
        """Egress queue of `port` drains at `pps` packets per second."""
        self.command(f"set_queue_rate {int(pps)} {int(port)}")

    def set_queue_depth(self, port: int, packets: int) -> None:
        self.command(f"set_queue_depth {int(packets)} {int(port)}")

    def set_default_action(self, table: str, action: str, *params: int) -> None:
        self.command(" ".join(["table_set_default", table, action, *map(str, params)]))

    def register_read(self, name: str) -> list[int]:
        """Every cell of a register, index order."""
        out = self.command(f"register_read {name}")
        for line in out.splitlines():
            head, sep, values = line.partition("=")
            if sep and head.strip().endswith(name.split(".")[-1]):
                return [int(v) for v in values.replace(",", " ").split()]
        raise Bmv2RuntimeError(f"bmv2 Thrift port {self.thrift_port}: register_read {name}: "
                               f"unexpected answer {out.strip()[:200]!r}")

    def close(self) -> None:
        if self._proc.poll() is None:
            try:
                self._proc.stdin.close()
                self._proc.wait(timeout=3)
            except (OSError, subprocess.TimeoutExpired):
                self._proc.kill()
                self._proc.wait()
        self._proc.stdout.close()

    def __enter__(self) -> Bmv2Runtime:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
