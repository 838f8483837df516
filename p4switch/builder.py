"""The builder: a separate Python process that generates and compiles a switch's
fused function with configuration tables baked in (p4switch/specialisation.py).

    python -m p4switch.builder      (a request on stdin, the answer on stdout)

The switch starts one per build, at an idle moment, and never forks itself for it.
The builder rebuilds the Program from the same bmv2 JSON, so the code it generates
names the switch's tables, registers and counters by the names the switch gave them
(code generation is deterministic: Program._name), builds with the given default
entries (FusedCodegen.build_specialised) and sends back the SpecialisedBuild:
marshalled code and constants, which the switch loads without compiling anything.
With the build come the kinds of the switch objects the code names, which the
switch checks against its own before it loads the code.

Why a new process, measured: building in the switch's own thread took the GIL from
the packet loop (5-20 ms slices for 0.3 s); a fork of the switch made the switch pay
a copy-on-write fault for every page it touched afterwards, which lengthened a
fattree:4 link-failure recovery from ~30 ms to 90-120 ms when the fork came just
before the traffic (docs/switch.md). The builder runs in a session (an autogroup) of
its own at the lowest weight and at SCHED_IDLE: it gets the CPU no one else wants.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import threading
from pathlib import Path

from p4switch.codegen_fused import SpecialisedBuild
from p4switch.lifetime import die_with_parent

_ROOT = Path(__file__).resolve().parent.parent


class BuildError(RuntimeError):
    pass


def command() -> list[str]:
    """How a builder process is started."""
    return [sys.executable, "-m", "p4switch.builder"]


class Builder:
    """Builds for one program, one builder process per build (`build`), which
    `kill` ends at once (the switch stopping, or loading another program)."""

    def __init__(self, program, bmv2_json: dict):
        self.program = program
        self._json = bmv2_json
        self._json_pickled: bytes | None = None  # made at the first build, kept
        self._proc: subprocess.Popen | None = None
        self._lock = threading.Lock()
        self._killed = False

    @property
    def killed(self) -> bool:
        return self._killed

    @property
    def pid(self) -> int | None:
        proc = self._proc
        return None if proc is None else proc.pid

    def build(self, prog, baked: dict) -> SpecialisedBuild:
        """prog.build_specialised(baked), in a builder process (this thread waits with
        the GIL free); BuildError for what went wrong there."""
        if prog is not self.program:
            raise BuildError("the builder was made for another program")
        if self._json_pickled is None:
            self._json_pickled = pickle.dumps(self._json)
        kind, value = self._ask(("build", self._json_pickled, baked))
        if kind != "ok":
            raise BuildError(value)
        built, kinds = value
        for name, want in kinds.items():
            have = _kind(prog.ns.get(name, _Missing))
            if have != want:
                raise BuildError(f"the builder's code names {name} as a {want}, the "
                                 f"switch has a {have}: not loaded")
        return built

    def probe(self) -> tuple[int, int, int]:
        """(pid, scheduling policy, session id) as a builder process sees them."""
        kind, value = self._ask(("probe",))
        if kind != "ok":
            raise BuildError(value)
        return value

    def _ask(self, request: tuple) -> tuple[str, object]:
        data = pickle.dumps(request)
        with self._lock:
            if self._killed:
                raise BuildError("the builder was stopped")
            env = dict(os.environ)
            env["PYTHONPATH"] = os.pathsep.join(
                [str(_ROOT)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
            # No preexec_fn: subprocess uses vfork, which copies nothing of the switch.
            self._proc = proc = subprocess.Popen(
                command(), stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                start_new_session=True, cwd=str(_ROOT))
            _demote(proc.pid)
        try:
            out, err = proc.communicate(data)
        finally:
            with self._lock:
                self._proc = None
                killed = self._killed
        if killed:
            raise BuildError("the builder was stopped")
        if proc.returncode != 0 or not out:
            last = err.decode(errors="replace").strip().splitlines()[-1:] or [""]
            raise BuildError(f"the builder process ended with status {proc.returncode}"
                             + (f": {last[0]}" if last[0] else ""))
        try:
            return pickle.loads(out)
        except Exception as e:  # noqa: BLE001 - a truncated answer
            raise BuildError(f"the builder's answer is unreadable ({e})") from None

    def kill(self) -> None:
        """End a build in progress (by PID), and any later one before it starts."""
        with self._lock:
            self._killed = True
            proc = self._proc
        if proc is not None:
            try:
                proc.kill()
            except ProcessLookupError:
                pass



class _Missing:
    pass


def _kind(obj) -> str:
    """What a global of the generated code is, enough to tell two apart."""
    if obj is _Missing:
        return "nothing"
    n = len(obj) if isinstance(obj, list | tuple) else None  # (a table's dict grows)
    return type(obj).__name__ + ("" if n is None else f"[{n}]")


def _demote(pid: int) -> None:
    """From the switch, as soon as the builder exists: its session's autogroup at nice
    19 and itself at SCHED_IDLE, before its interpreter has started. Until then a new
    session's autogroup competes with each switch's at full weight: builders of idle
    switches starting during a run took busy switches' share of the cores."""
    try:
        with open(f"/proc/{pid}/autogroup", "w") as f:
            f.write("19")
    except OSError:
        pass
    try:
        os.sched_setscheduler(pid, os.SCHED_IDLE, os.sched_param(0))
    except (OSError, AttributeError):
        pass


def _lowest_priority() -> None:
    """In the builder: demoted as the switch does it (again, should the switch have
    been refused), and killed when the switch's thread that started us ends."""
    _demote(os.getpid())
    if os.sched_getscheduler(0) != os.SCHED_IDLE:
        try:
            os.nice(19)
        except OSError:
            pass
    die_with_parent()


def _answer(request: tuple) -> tuple[str, object]:
    if request[0] == "probe":
        return "ok", (os.getpid(), os.sched_getscheduler(0), os.getsid(0))
    _op, bmv2_json, baked = request
    from p4switch.program import Program

    prog = Program(pickle.loads(bmv2_json))
    names_before = set(prog.ns)
    built = prog.build_specialised(baked)
    if built is None:
        return "error", "nothing to build (no fused function, or nothing to bake)"
    code_names = _global_names(built)
    kinds = {n: _kind(prog.ns[n]) for n in code_names
             if n in names_before and n != "__builtins__"}
    return "ok", (built, kinds)


def _global_names(built: SpecialisedBuild) -> set[str]:
    import marshal

    names: set[str] = set()
    todo = [marshal.loads(built.code)]
    if built.helpers_code is not None:
        todo.append(marshal.loads(built.helpers_code))
    while todo:
        code = todo.pop()
        names.update(code.co_names)
        todo += [c for c in code.co_consts if hasattr(c, "co_names")]
    return names


LOCK = Path("/tmp/p4switch-builder.lock")


def _one_at_a_time():
    """One builder at a time on the machine (the others wait, using no CPU): twenty
    switches' builders at once, even at the lowest priority, crowd the caches and the
    memory of the switches that carry a run's traffic."""
    import fcntl

    try:
        fd = os.open(LOCK, os.O_RDWR | os.O_CREAT, 0o666)
        fcntl.flock(fd, fcntl.LOCK_EX)
        return fd  # held until the process ends
    except OSError:
        return None


def main() -> int:
    _lowest_priority()
    _lock = _one_at_a_time()  # noqa: F841 - held for the build
    request = pickle.loads(sys.stdin.buffer.read())
    try:
        reply = _answer(request)
    except Exception as e:  # noqa: BLE001 - reported to the switch
        reply = ("error", f"{type(e).__name__}: {e}")
    sys.stdout.buffer.write(pickle.dumps(reply))
    sys.stdout.buffer.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
