"""The process supervisor a distributed run keeps on each server (docs/cluster.md).

    ssh SERVER 'cd PROJECT && python3 -m fabriclab.remote_supervisor serve --ledger FILE'

One SSH session per server. Requests and replies are one JSON object per line on
stdin/stdout; every request has an `id` and its reply carries it (requests run
concurrently, so a blocking `read_line` does not hold up a `signal`):

    {"id": 1, "op": "start", "argv": [...], "stdout": PATH, "stderr": PATH,
     "netns": NAME | null, "mnexec_pid": PID | null, "cwd": DIR, "what": "NIC on h1"}
    -> {"id": 1, "ok": true, "pid": 4242, "start": 123456}

Operations: `hello`, `start`, `mkdirs`, `adopt` (a process started otherwise, such as a
Mininet node's shell, to stop at the end), `interfaces` and `directories` (to
remove at the end), `signal`, `poll`, `wait`, `read_line` (the next line of a
process's output file: a NIC's "ready"), `read_file`, `write_file`,
`list_files`, `call_unix` (one line to a unix socket, one line back: a NIC's
control socket), `stdin` (text to the standard input of a process started with
`"stdin": true`, which is then closed: a NIC's start time), `stop` (one process,
by PID) and `shutdown`.

Only processes this supervisor started or adopted are signalled, and only while
their start time (field 22 of /proc/PID/stat) is still the recorded one: a
reused PID is left alone. Nothing is ever stopped by name.

Everything started or adopted is written at once to the server's ledger file,
so when stdin reaches EOF (the runner died, or closed the session) or on
`shutdown` or SIGTERM, the supervisor stops every process by PID, deletes the
recorded interfaces and directories and removes its ledger. After a crash of
the supervisor itself, `python3 -m fabriclab.remote_supervisor cleanup --ledger
FILE` (which `fabriclab cleanup` runs over SSH) does the same from the file.

Standard library only: the server needs python3, not the project's venv.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

DEFAULT_LEDGER_DIR = Path("/run/fabriclab")
SIGNALS = {"SIGTERM": signal.SIGTERM, "SIGINT": signal.SIGINT, "SIGKILL": signal.SIGKILL,
           "SIGHUP": signal.SIGHUP}
READ_CHUNK = 1 << 20


class RequestError(Exception):
    """A request the supervisor refuses; its text is the reply's `error`."""


def _default_signals() -> None:
    """In a started process, before exec: SIGINT and SIGQUIT (ignored in a shell's
    background jobs) and SIGHUP (ignored under nohup) back to their defaults, whatever
    started this supervisor, so that a `signal` request reaches the process."""
    for sig in (signal.SIGINT, signal.SIGQUIT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)


def start_time(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[19])


def _alive(pid: int, start: int | None) -> bool:
    if start is None or start_time(pid) != start:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def stop_recorded(pid: int, start: int | None, popen=None, timeout: float = 3.0) -> bool:
    """SIGTERM, SIGKILL after `timeout`, by PID, only while the start time matches."""
    def gone() -> bool:
        if popen is not None and popen.poll() is not None:
            return True
        return not _alive(pid, start)

    for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, 2.0)):
        if gone():
            return True
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return True
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if gone():
                return True
            time.sleep(0.02)
    return gone()


def delete_interface(name: str) -> None:
    if Path("/sys/class/net", name).exists():
        subprocess.run(["ip", "link", "del", name], capture_output=True, check=False)


class Supervisor:
    """What one session started, its ledger file, and the request handlers."""

    def __init__(self, ledger: Path) -> None:
        self.ledger = Path(ledger)
        self.lock = threading.RLock()
        self.procs: dict[int, dict] = {}  # pid -> {"start", "what", "argv"}
        self.popens: dict[int, subprocess.Popen] = {}
        self.interfaces: list[str] = []
        self.directories: list[str] = []
        self.ledger.parent.mkdir(parents=True, exist_ok=True)
        self._save()

    def _save(self) -> None:
        me = os.getpid()
        data = {"owner": {"pid": me, "start": start_time(me)},
                "processes": [{"pid": pid, **info} for pid, info in self.procs.items()],
                "interfaces": self.interfaces, "directories": self.directories}
        tmp = self.ledger.with_suffix(".tmp")
        tmp.write_text(json.dumps(data))
        os.replace(tmp, self.ledger)

    def _record(self, pid: int, what: str, argv: list[str]) -> int:
        start = start_time(pid)
        if start is None:
            raise RequestError(f"process {pid} ({what}) is not running")
        with self.lock:
            self.procs[pid] = {"start": start, "what": what, "argv": argv}
            self._save()
        return start

    def _owned(self, pid: int) -> dict:
        info = self.procs.get(pid)
        if info is None:
            raise RequestError(f"pid {pid} was not started by this supervisor")
        if start_time(pid) not in (None, info["start"]):
            raise RequestError(f"pid {pid} now belongs to another process (start time)")
        return info

    # --- operations -------------------------------------------------------------------

    def op_hello(self, _req: dict) -> dict:
        return {"pid": os.getpid(), "start": start_time(os.getpid()), "uid": os.geteuid(),
                "python": sys.version.split()[0], "cwd": os.getcwd()}

    def op_start(self, req: dict) -> dict:
        argv = [str(a) for a in req.get("argv") or []]
        if not argv:
            raise RequestError("start: empty argv")
        prefix: list[str] = []
        if req.get("netns"):
            prefix = ["ip", "netns", "exec", str(req["netns"])]
        elif req.get("mnexec_pid"):
            prefix = ["mnexec", "-a", str(int(req["mnexec_pid"]))]
        for path in req.get("mkdirs") or []:
            Path(path).mkdir(parents=True, exist_ok=True)
        outs = []
        for key in ("stdout", "stderr"):
            path = req.get(key)
            if path:
                Path(path).parent.mkdir(parents=True, exist_ok=True)
                outs.append(open(path, "wb"))  # noqa: SIM115 - handed to the child
            else:
                outs.append(subprocess.DEVNULL)
        env = dict(os.environ, **{str(k): str(v) for k, v in (req.get("env") or {}).items()})
        try:
            proc = subprocess.Popen([*prefix, *argv],
                                    stdin=subprocess.PIPE if req.get("stdin") else subprocess.DEVNULL,
                                    stdout=outs[0], stderr=outs[1], cwd=req.get("cwd") or None,
                                    env=env, start_new_session=True,
                                    preexec_fn=_default_signals)
        except OSError as exc:
            raise RequestError(f"start {argv[0]}: {exc}") from None
        finally:
            for out in outs:
                if out is not subprocess.DEVNULL:
                    out.close()
        self.popens[proc.pid] = proc
        start = self._record(proc.pid, str(req.get("what") or argv[0]), [*prefix, *argv])
        return {"pid": proc.pid, "start": start}

    def op_adopt(self, req: dict) -> dict:
        pid = int(req["pid"])
        return {"pid": pid, "start": self._record(pid, str(req.get("what", "adopted")), [])}

    def op_interfaces(self, req: dict) -> dict:
        with self.lock:
            self.interfaces.extend(n for n in req.get("names", []) if n not in self.interfaces)
            self._save()
        return {}

    def op_directories(self, req: dict) -> dict:
        with self.lock:
            self.directories.extend(p for p in req.get("paths", []) if p not in self.directories)
            self._save()
        return {}

    def op_stdin(self, req: dict) -> dict:
        pid = int(req["pid"])
        self._owned(pid)
        proc = self.popens.get(pid)
        if proc is None or proc.stdin is None:
            raise RequestError(f"stdin: process {pid} was not started with stdin")
        try:
            proc.stdin.write(str(req.get("data", "")).encode())
            proc.stdin.close()
        except (OSError, ValueError) as exc:
            raise RequestError(f"stdin of {pid}: {exc}") from None
        return {}

    def op_signal(self, req: dict) -> dict:
        pid = int(req["pid"])
        info = self._owned(pid)
        sig = SIGNALS.get(str(req.get("signal", "SIGTERM")))
        if sig is None:
            raise RequestError(f"signal {req.get('signal')!r} is not one of {sorted(SIGNALS)}")
        if _alive(pid, info["start"]):
            os.kill(pid, sig)
        return {}

    def _returncode(self, pid: int) -> int | None:
        proc = self.popens.get(pid)
        if proc is not None:
            return proc.poll()
        info = self.procs[pid]
        return None if _alive(pid, info["start"]) else 0

    def op_poll(self, req: dict) -> dict:
        pid = int(req["pid"])
        self._owned(pid)
        return {"returncode": self._returncode(pid)}

    def op_wait(self, req: dict) -> dict:
        pid = int(req["pid"])
        self._owned(pid)
        deadline = time.monotonic() + float(req.get("timeout", 0))
        while self._returncode(pid) is None and time.monotonic() < deadline:
            time.sleep(0.02)
        return {"returncode": self._returncode(pid)}

    def op_read_line(self, req: dict) -> dict:
        """The next whole line of `path` from `offset`; waits up to `timeout` while the
        process `pid` runs. `eof` once the process exited and nothing more is there."""
        path, offset = Path(req["path"]), int(req.get("offset", 0))
        pid = req.get("pid")
        deadline = time.monotonic() + float(req.get("timeout", 10))
        while True:
            exited = pid is not None and (self._owned(int(pid)) and
                                          self._returncode(int(pid)) is not None)
            data = b""
            if path.exists():
                with open(path, "rb") as f:
                    f.seek(offset)
                    data = f.read(READ_CHUNK)
            end = data.find(b"\n")
            if end >= 0:
                line = data[:end + 1]
                return {"line": line.decode(errors="replace"), "offset": offset + len(line),
                        "eof": False}
            if exited or time.monotonic() >= deadline:
                tail = data if exited else b""
                return {"line": tail.decode(errors="replace"), "offset": offset + len(tail),
                        "eof": exited, "timeout": not exited}
            time.sleep(0.05)

    def op_mkdirs(self, req: dict) -> dict:
        for path in req.get("paths") or []:
            Path(path).mkdir(parents=True, exist_ok=True)
        return {}

    def op_read_file(self, req: dict) -> dict:
        path, offset = Path(req["path"]), int(req.get("offset", 0))
        try:
            with open(path, "rb") as f:
                f.seek(offset)
                data = f.read(int(req.get("max", READ_CHUNK)))
                size = os.fstat(f.fileno()).st_size
        except OSError as exc:
            raise RequestError(f"read {path}: {exc}") from None
        return {"data": base64.b64encode(data).decode(), "size": size}

    def op_write_file(self, req: dict) -> dict:
        path = Path(req["path"])
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(base64.b64decode(req.get("data", "")))
        except OSError as exc:
            raise RequestError(f"write {path}: {exc}") from None
        return {}

    def op_list_files(self, req: dict) -> dict:
        root = Path(req["root"])
        files = []
        if root.is_dir():
            for path in sorted(root.rglob("*")):
                if path.is_file():
                    st = path.stat()
                    files.append({"path": str(path.relative_to(root)), "size": st.st_size,
                                  "mtime_ns": st.st_mtime_ns})
        return {"files": files}

    def op_call_unix(self, req: dict) -> dict:
        timeout = float(req.get("timeout", 5))
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(timeout)
            try:
                sock.connect(str(req["path"]))
                sock.sendall(str(req["line"]).strip().encode() + b"\n")
                reply = b""
                while not reply.endswith(b"\n"):
                    chunk = sock.recv(65536)
                    if not chunk:
                        break
                    reply += chunk
            except OSError as exc:
                raise RequestError(f"unix socket {req['path']}: {exc}") from None
        return {"reply": reply.decode(errors="replace")}

    def op_stop(self, req: dict) -> dict:
        pid = int(req["pid"])
        info = self._owned(pid)
        stopped = stop_recorded(pid, info["start"], self.popens.get(pid),
                                float(req.get("timeout", 3.0)))
        proc = self.popens.get(pid)
        return {"stopped": stopped, "returncode": proc.poll() if proc else None}

    # --- the end ------------------------------------------------------------------------

    def stop_all(self) -> list[str]:
        """Every recorded process (newest first, in parallel), then interfaces and
        directories; the ledger goes once all of it is gone. Returns what is left."""
        with self.lock:
            procs = list(self.procs.items())[::-1]

        def alive() -> list[tuple[int, dict]]:
            out = []
            for pid, info in procs:
                popen = self.popens.get(pid)
                if (popen is None or popen.poll() is None) and _alive(pid, info["start"]):
                    out.append((pid, info))
            return out

        # SIGTERM to all at once (NICs write their logs, tcpdump flushes), SIGKILL to
        # what still runs after 3 s (an interactive shell ignores SIGTERM), by PID.
        for sig, wait in ((signal.SIGTERM, 3.0), (signal.SIGKILL, 2.0)):
            for pid, _info in alive():
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    pass
            deadline = time.monotonic() + wait
            while alive() and time.monotonic() < deadline:
                time.sleep(0.05)
        left = [f"process {pid} ({info['what']})" for pid, info in alive()]
        left += remove_recorded(self.interfaces, self.directories)
        if not left:
            self.ledger.unlink(missing_ok=True)
        return left


def remove_recorded(interfaces: list[str], directories: list[str]) -> list[str]:
    left = []
    for name in interfaces:
        delete_interface(name)
        if Path("/sys/class/net", name).exists():
            left.append(f"interface {name}")
    for path in directories:
        shutil.rmtree(path, ignore_errors=True)
        if Path(path).exists():
            left.append(f"directory {path}")
    return left


def serve(ledger: Path, stdin=None, stdout=None) -> int:
    stdin = stdin or sys.stdin.buffer
    stdout = stdout or sys.stdout.buffer
    sup = Supervisor(ledger)
    out_lock = threading.Lock()
    done = threading.Event()

    def reply(obj: dict) -> None:
        with out_lock:
            stdout.write(json.dumps(obj).encode() + b"\n")
            stdout.flush()

    def handle(req: dict) -> None:
        op = str(req.get("op", ""))
        try:
            handler = getattr(sup, f"op_{op}", None)
            if handler is None:
                raise RequestError(f"unknown op {op!r}")
            result = {"id": req.get("id"), "ok": True, **handler(req)}
        except RequestError as exc:
            result = {"id": req.get("id"), "ok": False, "error": str(exc)}
        except (KeyError, ValueError, TypeError, OSError) as exc:
            result = {"id": req.get("id"), "ok": False, "error": f"{op}: {exc!r}"}
        reply(result)

    signal.signal(signal.SIGTERM, lambda *_: done.set())
    reader = threading.Thread(target=_read_requests, args=(stdin, handle, reply, done),
                              daemon=True)
    reader.start()
    done.wait()
    left = sup.stop_all()
    try:
        reply({"id": None, "ok": not left, "event": "stopped", "left": left})
    except (OSError, ValueError):
        pass  # the runner is gone
    return 0 if not left else 1


def _read_requests(stdin, handle, reply, done: threading.Event) -> None:
    for raw in stdin:
        try:
            req = json.loads(raw)
            if not isinstance(req, dict):
                raise ValueError("not an object")
        except ValueError as exc:
            reply({"id": None, "ok": False, "error": f"bad request line: {exc}"})
            continue
        if req.get("op") == "shutdown":
            break
        threading.Thread(target=handle, args=(req,), daemon=True).start()
    done.set()  # EOF (the runner died or closed the session) or shutdown


def cleanup(ledger: Path) -> list[str]:
    """After a crash: stop the ledger's supervisor if it still runs (it cleans up
    itself), then every recorded process by PID, interface and directory."""
    ledger = Path(ledger)
    try:
        data = json.loads(ledger.read_text())
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as exc:
        return [f"ledger {ledger}: {exc}"]
    owner = data.get("owner", {})
    if owner.get("pid") and owner.get("pid") != os.getpid():
        stop_recorded(int(owner["pid"]), owner.get("start"), timeout=10.0)
    left = [f"process {p['pid']} ({p.get('what')})" for p in data.get("processes", [])
            if not stop_recorded(int(p["pid"]), p.get("start"))]
    left += remove_recorded(data.get("interfaces", []), data.get("directories", []))
    if not left:
        ledger.unlink(missing_ok=True)
    return left


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m fabriclab.remote_supervisor")
    sub = parser.add_subparsers(dest="cmd", required=True)
    for name in ("serve", "cleanup"):
        p = sub.add_parser(name)
        p.add_argument("--ledger", required=True, type=Path,
                       help=f"this session's ledger file (under {DEFAULT_LEDGER_DIR})")
    args = parser.parse_args(argv)
    if args.cmd == "serve":
        return serve(args.ledger)
    left = cleanup(args.ledger)
    print(json.dumps({"left": left}))
    return 0 if not left else 1


if __name__ == "__main__":
    sys.exit(main())
