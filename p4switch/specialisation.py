"""Configuration tables baked into the fused fast path, in step with the control plane.

A configuration table is a keyless table whose default action the controller sets
(fabric.p4's fc_config, port_liveness, pkey_enforce, ...): every frame runs that one
action. `Program.specialise()` generates a fused function with the current default
entries of such tables as constants: the action inline, its data folded into the code
that reads it (p4switch/codegen_fold.py). This module decides when, and keeps the
switch correct while it happens:

* A write to a baked table (`Switch.table_set_default`) puts the generic fused
  function (the one that reads every table) back at once, under the switch lock:
  the next frame already sees the new default. Nothing is compiled on the write's
  path, and never per packet.
* A worker thread has the specialised function built by the program's builder: a
  fork of the switch that the worker makes right after a program is loaded,
  which waits for requests at SCHED_IDLE, in a session (an autogroup) of its
  own at the lowest weight. It gets the default entries to bake,
  generates and compiles (~0.3-1 s of CPU for fabric.p4, from what the data plane
  leaves), and sends back the marshalled code, which the switch loads in under a
  ms and swaps in under the switch lock, between two frames, if no baked table
  was written meanwhile (otherwise it tries again). Built in the switch's own
  thread, a rebuild took the GIL from the packet loop in 5-20 ms slices for those
  0.3 s; a fork per rebuild stopped the switch 2-20 ms at the fork; a builder in
  the switch's autogroup spent the switch's share of the cores. Each made the
  data plane late enough to overrun PFC headroom in a running 3-to-1 incast
  (3 of 9 and 7 of 20 runs lost 7-148 frames; 0 of 6 with this design, 0 of 6
  without specialisation; docs/switch.md).
* Debounced: no rebuild until the config writes of a burst are SETTLE_S behind
  (an SM configuring a switch writes several tables at once).
* Only tables written rarely are baked: a table is baked once it has not been
  written for QUIET_S, and that quiet time grows QUIET_GROWTH-fold (to at most
  QUIET_MAX_S) every time a write overturns its baked value. A table written
  often stays a table read in the specialised function (the others stay baked),
  and writes to it cost nothing more than before. So a controller writing one
  table periodically causes a handful of rebuilds, then none.

`Switch.specialise_now()` bakes every configuration table at once, synchronously:
for tests and benchmarks, and for a switch configured before it starts.
"""

from __future__ import annotations

import ctypes
import os
import pickle
import signal
import threading
import time
from collections.abc import Callable

from p4switch.codegen_fused import SpecialisedBuild
from p4switch.control_priority import normal_scheduling
from p4switch.program import Program

QUIET_S = 0.5
QUIET_GROWTH = 4
QUIET_MAX_S = 128.0
SETTLE_S = 0.2


class Specialisation:
    """The baking of one switch's configuration tables (see the module's doc)."""

    def __init__(self, install: Callable[[Program, Callable, str, dict], bool],
                 log: Callable[[str], None]):
        self._install = install  # takes the switch lock; False if the snapshot is stale
        self._log = log
        self._cond = threading.Condition()
        self._program: Program | None = None
        self._last_write: dict[str, float] = {}
        self._overturns: dict[str, int] = {}
        self._last_any = 0.0
        self._failed: set[frozenset] = set()  # table sets the generator could not bake
        self._thread: threading.Thread | None = None
        self._builder: Builder | None = None  # the running program's builder process
        self._builder_for: Program | None = None  # the program it was made for (or not)
        self._builder_lock = threading.Lock()
        self._running = False
        self.rebuilds = 0  # specialised functions installed

    # -- events (called with the switch lock held) ------------------------------------------
    def program_loaded(self, prog: Program) -> None:
        now = time.monotonic()
        with self._cond:
            self._program = prog
            self._last_write = {t: now for t in prog.configuration_tables()}
            self._overturns = dict.fromkeys(self._last_write, 0)
            self._last_any = now
            self._failed.clear()
            self._cond.notify()  # the worker makes the program's builder

    def written(self, prog: Program, table: str) -> None:
        """`table`'s default entry was just written: if it is baked into the running
        function, the generic one takes over now."""
        with self._cond:
            if table not in self._last_write or prog is not self._program:
                return
            now = time.monotonic()
            self._last_write[table] = now
            self._last_any = now
            if table in prog.baked:
                prog.fused, prog.baked = prog.fused_generic, {}
                prog.specialised_source = None
                self._overturns[table] += 1
            self._cond.notify()

    # -- policy ------------------------------------------------------------------------------
    def quiet_s(self, table: str) -> float:
        """How long `table` must go unwritten before it is baked."""
        return min(QUIET_MAX_S, QUIET_S * QUIET_GROWTH ** self._overturns.get(table, 0))

    def _plan(self, now: float) -> tuple[frozenset | None, float | None]:
        """(the tables to bake now, or None for no rebuild; when to look again)."""
        prog = self._program
        if prog is None or prog.fused_generic is None or not self._last_write:
            return None, None
        if now - self._last_any < SETTLE_S:
            return None, self._last_any + SETTLE_S
        # A baked table stays baked: its entry is current (a write un-bakes it).
        want, later = set(prog.baked), []
        for t, at in self._last_write.items():
            due = at + self.quiet_s(t)
            if t in want or prog.tables[t].default.action not in prog.actions:
                continue  # baked already, or no action to bake (no default entry)
            if now >= due:
                want.add(t)
            else:
                later.append(due)
        want = frozenset(want)
        again = min(later) if later else None
        if want == frozenset(prog.baked) or want in self._failed:
            return None, again
        return want, again

    # -- the worker ----------------------------------------------------------------------------
    def start(self) -> None:
        if self._thread is not None or os.environ.get("P4SWITCH_SPECIALISE") == "0":
            return  # (P4SWITCH_SPECIALISE=0: the generic function only, no builder)
        self._running = True
        self._thread = threading.Thread(target=self._run, name="p4switch-specialise",
                                        daemon=True)
        self._thread.start()

    def stop(self) -> None:
        with self._cond:
            self._running = False
            self._cond.notify()
        builder = self._builder
        if builder is not None:
            builder.kill()  # a build in progress ends now: the worker is not kept
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
        self._set_builder(None)  # (the worker closes it too; a join that timed out)

    def _set_builder(self, prog: Program | None) -> None:
        """The builder process for `prog` (None: none), the old one closed."""
        with self._builder_lock:
            old, self._builder = self._builder, None
            self._builder_for = prog
        if old is not None:
            old.close()
        if prog is not None and prog.fused_generic is not None \
                and prog.configuration_tables():
            try:
                self._builder = Builder(prog)
            except OSError as e:  # no fork here: the generic function keeps running
                self._log(f"fast path not specialised: no builder process ({e})")

    def _run(self) -> None:
        """The worker. It forks the builder itself, as soon as a program is loaded
        (before traffic: the fork stops the switch for 2-20 ms), so that the builder's
        PR_SET_PDEATHSIG, which fires when the thread that forked it ends, lasts as
        long as the worker."""
        try:
            while True:
                with self._cond:
                    if not self._running:
                        return
                    prog = self._program
                if prog is not self._builder_for:
                    self._set_builder(prog)
                    continue
                with self._cond:
                    if not self._running or self._program is not prog:
                        continue
                    now = time.monotonic()
                    want, again = self._plan(now)
                    if want is None:
                        self._cond.wait(None if again is None else max(0.0, again - now))
                        continue
                self.bake(prog, want, builder=self._builder)
        finally:
            self._set_builder(None)

    def bake(self, prog: Program, tables, builder: Builder | None = None) -> bool:
        """Build a fused function with `tables` baked and install it (the switch lock
        is taken to install only); False if it was not installed. With `builder`
        (the worker's way) the builder process generates and compiles it, else this
        thread does."""
        tables = frozenset(tables)
        try:
            if builder is not None:
                baked = prog.bakeable(tables)
                built = builder.build(prog, baked) if baked else None
                fn = None if built is None else prog.load_specialised(built)
                result = None if fn is None else (fn, built.source, baked)
            else:
                with normal_scheduling():
                    result = prog.specialise(tables)
        except Exception as e:  # noqa: BLE001 - the generic function keeps running
            with self._cond:
                if prog is not self._program:
                    return False  # replaced meanwhile: nothing to say about the new one
                self._failed.add(tables)
            self._log(f"fast path not specialised ({', '.join(sorted(tables))}): "
                      f"{type(e).__name__}: {e}")
            return False
        if result is None:
            with self._cond:
                self._failed.add(tables)
            return False
        fn, src, baked = result
        if not self._install(prog, fn, src, baked):
            return False
        self.rebuilds += 1
        return True


class BuildError(RuntimeError):
    pass


class Builder:
    """A fork of the switch made right after a program is loaded, which builds specialised
    fused functions of that program on request: it gets the default entries to bake
    and sends back a SpecialisedBuild (marshalled code: the switch compiles
    nothing). It runs at SCHED_IDLE, so its ~0.3-1 s of CPU per build comes from
    what the data plane leaves, and the data plane never waits for the GIL. The
    child runs only this loop: it never touches a lock another thread of the switch
    may have held at the fork, and never prints."""

    def __init__(self, prog: Program):
        self.program = prog
        req_r, req_w = os.pipe()
        res_r, res_w = os.pipe()
        parent = os.getpid()
        with normal_scheduling():  # the fork inherits this thread's policy
            self.pid = os.fork()
        if self.pid == 0:  # the child: never returns
            try:
                os.close(req_w)
                os.close(res_r)
                _lowest_priority(parent)
                _serve(prog, req_r, res_w)
            finally:
                os._exit(0)
        os.close(req_r)
        os.close(res_w)
        self._req, self._res = req_w, res_r
        self._lock = threading.Lock()

    def build(self, prog: Program, baked: dict) -> SpecialisedBuild | None:
        """prog.build_specialised(baked), in the builder (the GIL is free meanwhile);
        its exception comes back as BuildError."""
        if prog is not self.program:
            raise BuildError("the builder was made for another program")
        with self._lock:
            try:
                _send(self._req, baked)
                reply = _recv(self._res)
            except OSError as e:
                raise BuildError(f"the builder process is gone ({e})") from None
        if reply is None:
            raise BuildError("the builder process ended without a result")
        kind, value = reply
        if kind != "ok":
            raise BuildError(value)
        return value

    def kill(self) -> None:
        """End the builder now (by its PID): a build() waiting for it returns."""
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def close(self) -> None:
        """Stop the builder and reap it."""
        self.kill()
        with self._lock:  # after a build() in progress has seen the end
            for fd in (self._req, self._res):
                try:
                    os.close(fd)
                except OSError:
                    pass
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass


def _serve(prog: Program, req: int, res: int) -> None:
    """The builder's loop: a request (default entries by table), a reply, until EOF."""
    while (baked := _recv(req)) is not None:
        try:
            reply = ("ok", prog.build_specialised(baked))
        except BaseException as e:  # noqa: BLE001 - reported to the switch
            reply = ("error", f"{type(e).__name__}: {e}")
        _send(res, reply)


def _send(fd: int, obj: object) -> None:
    data = pickle.dumps(obj)
    view = memoryview(len(data).to_bytes(8, "big") + data)
    while view:
        view = view[os.write(fd, view):]


def _recv(fd: int) -> object | None:
    """One message, or None at end of file."""
    head = _read_exactly(fd, 8)
    if head is None:
        return None
    body = _read_exactly(fd, int.from_bytes(head, "big"))
    return None if body is None else pickle.loads(body)


def _read_exactly(fd: int, n: int) -> bytes | None:
    chunks, left = [], n
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _lowest_priority(parent: int) -> None:
    """In the child: its own session at the lowest weight, SCHED_IDLE (nice 19 where
    refused), and killed with its parent. Its own session because with autogroup
    scheduling (sched_autogroup_enabled) a session's threads share one weight: in
    the switch's session the build would spend the switch's share of the cores,
    and the data plane would wait for it behind every other busy process."""
    try:
        os.setsid()
        with open("/proc/self/autogroup", "w") as f:
            f.write("19")
    except OSError:
        pass
    try:
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    except (OSError, AttributeError):
        try:
            os.nice(19)
        except OSError:
            pass
    try:  # PR_SET_PDEATHSIG: a killed switch leaves no builder behind
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:  # the parent died before prctl
        os._exit(1)
