"""The runner's side of the remote process supervisor (fabriclab/remote_supervisor.py).

Every process of a run (switch, NIC, agent, tcpdump) is started through one
interface, a spawner with subprocess.Popen's signature that returns a handle
with Popen's methods (`pid`, `poll`, `wait`, `send_signal`, `terminate`,
`kill`, `stdout`/`stderr` when piped):

* on this machine and on namespace servers reached directly, the handle is a
  `subprocess.Popen` (`ip netns exec`, `mnexec -a PID`), recorded in the run's
  ledger by PID;
* on a supervised server (a real server, or a namespace server in `ssh:ns:N`
  mode) it is a `RemoteProcess`: started, signalled, read and stopped by that
  server's supervisor over one SSH session, and recorded in the supervisor's
  ledger on the server (`record`/`stop` below pick the right one).

Files: a supervised server has its own directory for the run
(`/tmp/flr-<prefix><server>/`); every argument under a mapped local root (the
run directory, a NIC fleet's control directory) is rewritten to its place
there, existing input files (flows) are copied there first, and `collect()`
copies what the processes wrote (logs, captures, NIC logs) back into the run
directory.
"""

from __future__ import annotations

import base64
import itertools
import json
import signal
import subprocess
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SUPERVISOR_LEDGER_DIR = "/run/fabriclab"
REQUEST_TIMEOUT_S = 60.0


class RemoteError(RuntimeError):
    """The supervisor refused a request, or its session is gone."""


def is_remote(proc) -> bool:
    return isinstance(proc, RemoteProcess)


def record(ledger, proc, what: str) -> None:
    """A started process into the run's ledger; a remote one is in its supervisor's."""
    if not is_remote(proc):
        ledger.add_process(proc.pid, what)


def stop(proc, timeout: float = 3.0) -> bool:
    """SIGTERM, then SIGKILL, by PID (start time checked) wherever the process runs."""
    if is_remote(proc):
        return proc.stop(timeout)
    from topologies.ledger import stop_pid

    return stop_pid(proc.pid, timeout=timeout)


class SupervisorClient:
    """One SSH session to one server's supervisor: requests by id, replies by id."""

    def __init__(self, server: str, argv: list[str], ledger_path: str) -> None:
        self.server = server
        self.ledger_path = ledger_path
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, start_new_session=True)
        self._ids = itertools.count(1)
        self._pending: dict[int, dict] = {}
        self._cond = threading.Condition()
        self._write = threading.Lock()
        self._closed: str | None = None
        self.stopped_event: dict | None = None
        threading.Thread(target=self._read, daemon=True,
                         name=f"supervisor-{server}").start()

    def _read(self) -> None:
        for raw in self.proc.stdout:
            try:
                reply = json.loads(raw)
            except ValueError:
                continue
            with self._cond:
                if reply.get("event") == "stopped":
                    self.stopped_event = reply
                elif reply.get("id") is not None:
                    self._pending[reply["id"]] = reply
                self._cond.notify_all()
        err = self.proc.stderr.read().decode(errors="replace").strip()
        with self._cond:
            self._closed = err or f"session ended (exit {self.proc.poll()})"
            self._cond.notify_all()

    def request(self, op: str, reply_timeout: float = REQUEST_TIMEOUT_S, **args) -> dict:
        rid = next(self._ids)
        line = json.dumps({"id": rid, "op": op, **args}).encode() + b"\n"
        with self._write:
            try:
                self.proc.stdin.write(line)
                self.proc.stdin.flush()
            except (OSError, ValueError):
                raise RemoteError(f"supervisor on {self.server}: session closed "
                                  f"({self._closed or 'stdin closed'})") from None
        deadline = time.monotonic() + reply_timeout
        with self._cond:
            while rid not in self._pending:
                if self._closed is not None:
                    raise RemoteError(f"supervisor on {self.server}: {op}: {self._closed}")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise RemoteError(f"supervisor on {self.server}: {op}: no reply in "
                                      f"{reply_timeout:g} s")
                self._cond.wait(min(left, 1.0))
            reply = self._pending.pop(rid)
        if not reply.get("ok"):
            raise RemoteError(f"supervisor on {self.server}: {reply.get('error')}")
        return reply

    def shutdown(self, timeout: float = 30.0) -> list[str]:
        """Stop everything it started (by PID), wait for its report; what it left."""
        with self._write:
            try:
                self.proc.stdin.write(b'{"op": "shutdown"}\n')
                self.proc.stdin.close()
            except (OSError, ValueError):
                pass
        deadline = time.monotonic() + timeout
        with self._cond:
            while self.stopped_event is None and self._closed is None:
                if time.monotonic() > deadline:
                    break
                self._cond.wait(0.5)
        try:
            self.proc.wait(max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self.stopped_event is None:
            return [f"supervisor on {self.server}: no stop report ({self._closed})"]
        return list(self.stopped_event.get("left", []))


class RemoteStream:
    """A remote process's piped stdout or stderr, read line by line from its file."""

    def __init__(self, proc: RemoteProcess, path: str, text: bool) -> None:
        self.proc, self.path, self.text = proc, path, text
        self.offset = 0
        self.eof = False

    def readline(self, timeout: float = 60.0):
        if self.eof:
            return "" if self.text else b""
        deadline = time.monotonic() + timeout
        while True:
            r = self.proc.client.request("read_line", path=self.path, offset=self.offset,
                                         pid=self.proc.pid, timeout=min(5.0, timeout))
            self.offset = r["offset"]
            if r["line"] or r["eof"] or time.monotonic() > deadline:
                self.eof = r["eof"] and not r["line"]
                line = r["line"]
                return line if self.text else line.encode()

    def __iter__(self):
        while True:
            line = self.readline(timeout=3600)
            if not line:
                return
            yield line

    def read(self):
        return ("" if self.text else b"").join(self)


class RemoteInput:
    """The standard input of a supervised process: what is written goes to it on close."""

    def __init__(self, proc: RemoteProcess) -> None:
        self.proc, self.buffer, self.closed = proc, [], False

    def write(self, data: str | bytes) -> int:
        text = data.decode() if isinstance(data, bytes) else data
        self.buffer.append(text)
        return len(data)

    def flush(self) -> None:
        pass

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.proc.client.request("stdin", pid=self.proc.pid, data="".join(self.buffer))


class RemoteProcess:
    """A process on a supervised server, with subprocess.Popen's methods."""

    def __init__(self, client: SupervisorClient, pid: int, start: int, what: str,
                 outputs: dict[str, str], text: bool) -> None:
        self.client, self.pid, self.start, self.what = client, pid, start, what
        self.returncode: int | None = None
        self.args = what
        self.stdout = RemoteStream(self, outputs["stdout"], text) if "stdout" in outputs else None
        self.stderr = RemoteStream(self, outputs["stderr"], text) if "stderr" in outputs else None
        self.stdin = RemoteInput(self) if outputs.get("stdin") else None

    def poll(self) -> int | None:
        if self.returncode is None:
            try:
                self.returncode = self.client.request("poll", pid=self.pid)["returncode"]
            except RemoteError:
                return None
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            left = 5.0 if deadline is None else deadline - time.monotonic()
            if left <= 0:
                raise subprocess.TimeoutExpired(self.what, timeout)
            self.client.request("wait", pid=self.pid, timeout=min(left, 5.0))
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            self.client.request("signal", pid=self.pid, signal=signal.Signals(sig).name)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def stop(self, timeout: float = 3.0) -> bool:
        if self.returncode is not None:
            return True
        r = self.client.request("stop", pid=self.pid, timeout=timeout)
        if r.get("returncode") is not None:
            self.returncode = r["returncode"]
        return bool(r.get("stopped"))


class RemoteHost:
    """One supervised server: its session, its run directory there, the path mapping."""

    def __init__(self, server: str, client: SupervisorClient, workdir: str) -> None:
        self.server, self.client, self.workdir = server, client, workdir
        self.roots: list[tuple[Path, str]] = []
        self._fetched: dict[str, tuple[int, int]] = {}
        self._seq = itertools.count()
        self.client.request("directories", paths=[workdir])

    def map_root(self, local: Path) -> str:
        local = Path(local).resolve()
        for have, remote in self.roots:
            if have == local:
                return remote
        remote = f"{self.workdir}/{len(self.roots)}"
        self.roots.append((local, remote))
        return remote

    def remote_path(self, local: str | Path) -> str | None:
        path = Path(local)
        if not path.is_absolute():
            return None
        for have, remote in self.roots:
            try:
                return f"{remote}/{path.resolve().relative_to(have)}".rstrip("/.")
            except ValueError:
                continue
        return None

    def _map_argv(self, argv: list[str]) -> tuple[list[str], list[str]]:
        out, dirs = [], set()
        for arg in argv:
            remote = self.remote_path(arg) if str(arg).startswith("/") else None
            if remote is None:
                out.append(str(arg))
                continue
            local = Path(arg)
            if local.is_file():
                self.push(local, remote)
            dirs.add(remote if local.is_dir() else str(Path(remote).parent))
            out.append(remote)
        return out, sorted(dirs)

    def push(self, local: Path, remote: str) -> None:
        self.client.request("write_file", path=remote,
                            data=base64.b64encode(Path(local).read_bytes()).decode())

    def popen(self, argv: list[str], *, what: str = "", netns: str | None = None,
              mnexec_pid: int | None = None, stdin=None, stdout=None, stderr=None,
              text: bool = False, cwd: str | None = None, **_popen_kwargs) -> RemoteProcess:
        """Popen's signature: PIPE -> a file on the server read back line by line; an
        open local file (a log) -> its mapped place there, collected later."""
        argv, dirs = self._map_argv([str(a) for a in argv])
        n = next(self._seq)
        outputs, files = {}, {}
        for key, dest in (("stdout", stdout), ("stderr", stderr)):
            if dest == subprocess.PIPE:
                outputs[key] = files[key] = f"{self.workdir}/out/{n}.{key}"
            elif dest == subprocess.STDOUT and key == "stderr":
                files[key] = files.get("stdout")
            elif hasattr(dest, "name") and self.remote_path(dest.name):
                files[key] = self.remote_path(dest.name)
        if stdin == subprocess.PIPE:  # written on close (RemoteInput)
            outputs["stdin"] = "pipe"
        r = self.client.request("start", argv=argv, what=what or argv[0], netns=netns,
                                mnexec_pid=mnexec_pid, cwd=cwd or str(ROOT), mkdirs=dirs,
                                stdin=stdin == subprocess.PIPE,
                                stdout=files.get("stdout"), stderr=files.get("stderr"))
        return RemoteProcess(self.client, r["pid"], r["start"], what or argv[0], outputs, text)

    def run(self, argv: list[str], *, what: str = "", mnexec_pid: int | None = None,
            timeout: float = 10.0) -> None:
        """A short command there (`ip link set ...`), waited for; RemoteError with its
        output if it fails."""
        proc = self.popen(argv, what=what or " ".join(argv), mnexec_pid=mnexec_pid,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            code = proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.stop()
            raise RemoteError(f"{self.server}: {' '.join(argv)}: no exit in {timeout:g} s")\
                from None
        if code != 0:
            raise RemoteError(f"{self.server}: {' '.join(argv)}: exit {code}: "
                              f"{proc.stdout.read().strip()}")

    def forward_unix(self, ssh: list[str], local_socket: str) -> tuple[subprocess.Popen, str]:
        """An SSH reverse forward: a unix socket on the server (in this run's directory
        there) whose connections reach `local_socket` here (the SM's report socket:
        agents report over SSH, never over the network in the clear). (ssh, its path)."""
        if self.remote_path(local_socket) is None:
            self.map_root(Path(local_socket).parent)
        remote = self.remote_path(local_socket)
        self.client.request("mkdirs", paths=[str(Path(remote).parent)])
        proc = subprocess.Popen([*ssh[:-1], "-N", "-o", "ExitOnForwardFailure=yes",
                                 "-o", "StreamLocalBindUnlink=yes",
                                 "-R", f"{remote}:{local_socket}", ssh[-1]],
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, start_new_session=True)
        return proc, remote

    def call_unix(self, local_path: str, line: str, timeout: float = 5.0) -> str:
        path = self.remote_path(local_path) or local_path
        return self.client.request("call_unix", path=path, line=line, timeout=timeout)["reply"]

    def adopt(self, pid: int, what: str) -> None:
        self.client.request("adopt", pid=pid, what=what)

    def add_interfaces(self, names: list[str]) -> None:
        self.client.request("interfaces", names=names)

    def collect(self) -> int:
        """Copy every file the server wrote under a mapped root back here; returns
        how many bytes were fetched (only files changed since the last collect)."""
        total = 0
        for local_root, remote_root in self.roots:
            for f in self.client.request("list_files", root=remote_root)["files"]:
                key = f"{remote_root}/{f['path']}"
                stamp = (f["size"], f["mtime_ns"])
                if self._fetched.get(key) == stamp:
                    continue
                total += self._fetch(key, local_root / f["path"])
                self._fetched[key] = stamp
        return total

    def _fetch(self, remote: str, local: Path) -> int:
        local.parent.mkdir(parents=True, exist_ok=True)
        offset = 0
        with open(local, "wb") as out:
            while True:
                r = self.client.request("read_file", path=remote, offset=offset)
                data = base64.b64decode(r["data"])
                out.write(data)
                offset += len(data)
                if not data or offset >= r["size"]:
                    return offset


def supervisor_command(ssh: list[str], ledger_path: str, sudo: bool = False) -> list[str]:
    """The ssh command line that starts a server's supervisor in the project's path."""
    run = ["python3", "-m", "fabriclab.remote_supervisor", "serve", "--ledger", ledger_path]
    return [*ssh, f"cd {ROOT} && exec {'sudo -n ' if sudo else ''}{' '.join(run)}"]


def cleanup_command(ssh: list[str], ledger_path: str, sudo: bool = False) -> list[str]:
    run = ["python3", "-m", "fabriclab.remote_supervisor", "cleanup", "--ledger", ledger_path]
    return [*ssh, f"cd {ROOT} && exec {'sudo -n ' if sudo else ''}{' '.join(run)}"]
