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
* A worker thread has the specialised function built in a child process (a fork
  of the switch, at SCHED_IDLE: ~0.3 s of CPU for fabric.p4 that the data plane
  does not wait for, neither for the GIL nor for a core), loads the compiled code
  the child sends back (marshalled: nothing is parsed or compiled in the switch)
  and swaps it in under the switch lock, between two frames, if no baked table
  was written meanwhile (otherwise it tries again). Building in the switch's own
  process took the GIL from the packet loop in 5-20 ms slices for those 0.3 s:
  enough to make its sockets and timers late and fail timing tests.
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
        self._child: ChildBuild | None = None  # the build running now, if any
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
            self._cond.notify()

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
        if self._thread is not None:
            return
        self._running = True
        self._thread = threading.Thread(target=self._run, name="p4switch-specialise",
                                        daemon=True)
        self._thread.start()

    def stop(self) -> None:
        with self._cond:
            self._running = False
            self._cond.notify()
        child = self._child
        if child is not None:
            child.kill()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def _run(self) -> None:
        while True:
            with self._cond:
                if not self._running:
                    return
                now = time.monotonic()
                want, again = self._plan(now)
                prog = self._program
                if want is None:
                    self._cond.wait(None if again is None else max(0.0, again - now))
                    continue
            self.bake(prog, want, in_child=True)

    def bake(self, prog: Program, tables, in_child: bool = False) -> bool:
        """Build a fused function with `tables` baked and install it (the switch lock
        is taken to install only); False if it was not installed. `in_child`: build
        it in a child process (the worker's way), else in this thread."""
        tables = frozenset(tables)
        try:
            if in_child:
                with prog._codegen_lock:
                    baked = prog.bakeable(tables)
                built = self._build_in_child(prog, baked) if baked else None
                fn = None if built is None else prog.load_specialised(built)
                result = None if fn is None else (fn, built.source, baked)
            else:
                with normal_scheduling():
                    result = prog.specialise(tables)
        except Exception as e:  # noqa: BLE001 - the generic function keeps running
            with self._cond:
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

    def _build_in_child(self, prog: Program, baked: dict) -> SpecialisedBuild | None:
        """prog.build_specialised(baked), run in a fork of this process at SCHED_IDLE;
        the child's exception is raised here as BuildError. Stop() kills the child."""
        with prog._codegen_lock:  # held in the parent across the fork: no half state
            with normal_scheduling():  # the fork inherits this thread's policy
                self._child = child = ChildBuild(lambda: prog.build_specialised(baked))
        try:
            return child.result()
        finally:
            self._child = None


class BuildError(RuntimeError):
    pass


class ChildBuild:
    """`fn()` run in a forked child process at the lowest priority the kernel has; its
    result (picklable) or exception comes back through a pipe. The child inherits
    only the calling thread: it must not touch locks other threads may hold (it
    runs code generation only, and never prints)."""

    def __init__(self, fn: Callable[[], object]):
        r, w = os.pipe()
        parent = os.getpid()
        self.pid = os.fork()
        if self.pid == 0:  # the child: never returns
            status = 1
            try:
                os.close(r)
                _lowest_priority(parent)
                try:
                    payload = ("ok", fn())
                except BaseException as e:  # noqa: BLE001 - reported to the parent
                    payload = ("error", f"{type(e).__name__}: {e}")
                data = pickle.dumps(payload)
                view = memoryview(data)
                while view:
                    view = view[os.write(w, view):]
                status = 0
            finally:
                os._exit(status)
        os.close(w)
        self._r = r

    def result(self) -> object:
        """Wait for the child (the GIL is free meanwhile) and return fn()'s result."""
        chunks = []
        try:
            while chunk := os.read(self._r, 1 << 20):
                chunks.append(chunk)
        finally:
            os.close(self._r)
            _, status = os.waitpid(self.pid, 0)
        if not chunks:
            raise BuildError(f"the build process ended without a result (wait status "
                             f"{status})")
        kind, value = pickle.loads(b"".join(chunks))
        if kind != "ok":
            raise BuildError(value)
        return value

    def kill(self) -> None:
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _lowest_priority(parent: int) -> None:
    """In the child: SCHED_IDLE (nice 19 where refused), and killed with its parent."""
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
