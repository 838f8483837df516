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
* A worker thread has the specialised function built by a builder process
  (p4switch/builder.py: a new Python process, at SCHED_IDLE in an autogroup of its
  own at the lowest weight, that rebuilds the Program from the same JSON and
  generates with the given default entries). The switch loads the marshalled
  code it sends back in under a ms and swaps it in under the switch lock, between
  two frames, if no baked table was written meanwhile (otherwise it tries again).
* Debounced: no rebuild until the config writes of a burst are SETTLE_S behind
  (an SM configuring a switch writes several tables at once).
* Never while frames move: a build is asked for only when the data plane has had
  no frame for IDLE_S and holds none, and builders take turns on the machine
  (p4switch/builder.py). A switch under unbroken traffic keeps the
  generic function until its first pause. How each alternative disturbed the
  data plane, measured, is in p4switch/builder.py and docs/switch.md.
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

import os
import threading
import time
from collections.abc import Callable

from p4switch.builder import Builder
from p4switch.control_priority import normal_scheduling
from p4switch.program import Program

QUIET_S = 0.5
QUIET_GROWTH = 4
QUIET_MAX_S = 128.0
SETTLE_S = 0.2
IDLE_S = 0.5


class Specialisation:
    """The baking of one switch's configuration tables (see the module's doc)."""

    def __init__(self, install: Callable[[Program, Callable, str, dict], bool],
                 log: Callable[[str], None], idle_for: Callable[[], float] = lambda: 1e9):
        self._install = install  # takes the switch lock; False if the snapshot is stale
        self._log = log
        self._idle_for = idle_for  # seconds since the data plane last had a frame
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
        if self._thread is not None or os.environ.get("P4SWITCH_SPECIALISE") != "1":
            return  # off unless P4SWITCH_SPECIALISE=1 (see docs/switch.md: runs stay generic)
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
            old.kill()
        if prog is not None and prog.fused_generic is not None \
                and prog.configuration_tables():
            self._builder = Builder(prog, prog.json)

    def _run(self) -> None:
        """The worker. It starts the builder processes itself, so that their
        PR_SET_PDEATHSIG, which fires when the thread that started them ends, lasts
        as long as the worker."""
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
                    busy = IDLE_S - self._idle_for()
                    if busy > 0:  # frames are moving: not now
                        self._cond.wait(max(busy, 0.01))
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
                if prog is not self._program or (builder is not None and builder.killed):
                    return False  # replaced or stopped meanwhile: nothing to report
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
