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
* A worker thread rebuilds the specialised function off the lock (at normal
  scheduling; ~0.3 s of CPU for fabric.p4) and swaps it in under the switch lock,
  between two frames, if no baked table was written meanwhile (otherwise it tries
  again).
* Debounced: no rebuild until the config writes of a burst are SETTLE_S behind
  (an SM configuring a switch writes several tables at once).
* Out of the data plane's way: the rebuild's Python shares the GIL with the packet
  loop, which then waits up to a switch interval, or a C call's length (parsing,
  compiling: 5-20 ms), between two looks at its sockets and timers. So the worker
  waits until the data plane has not woken up for IDLE_S (no frame, no timer:
  nothing held by recirculation either), or at most BUSY_MAX_S under steady traffic.
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

import threading
import time
from collections.abc import Callable

from p4switch.control_priority import normal_scheduling
from p4switch.program import Program

QUIET_S = 0.5
QUIET_GROWTH = 4
QUIET_MAX_S = 128.0
SETTLE_S = 0.2
IDLE_S = 0.05
BUSY_MAX_S = 10.0


class Specialisation:
    """The baking of one switch's configuration tables (see the module's doc)."""

    def __init__(self, install: Callable[[Program, Callable, str, dict], bool],
                 log: Callable[[str], None], idle_for: Callable[[], float] = lambda: 1e9):
        self._install = install  # takes the switch lock; False if the snapshot is stale
        self._log = log
        self._idle_for = idle_for  # seconds since the data plane last woke up
        self._cond = threading.Condition()
        self._program: Program | None = None
        self._last_write: dict[str, float] = {}
        self._overturns: dict[str, int] = {}
        self._last_any = 0.0
        self._failed: set[frozenset] = set()  # table sets the generator could not bake
        self._thread: threading.Thread | None = None
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
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def _run(self) -> None:
        due_since = None  # when the rebuild now waiting for a quiet data plane was due
        while True:
            with self._cond:
                if not self._running:
                    return
                now = time.monotonic()
                want, again = self._plan(now)
                prog = self._program
                if want is None:
                    due_since = None
                    self._cond.wait(None if again is None else max(0.0, again - now))
                    continue
                # A rebuild takes the GIL from the data plane for ~0.3 s (in slices;
                # 5-20 ms at a time): when the data plane is quiet, unless it never is.
                due_since = now if due_since is None else due_since
                busy = IDLE_S - self._idle_for()
                if busy > 0 and now - due_since < BUSY_MAX_S:
                    self._cond.wait(busy)
                    continue
            due_since = None
            self.bake(prog, want)

    def bake(self, prog: Program, tables) -> bool:
        """Generate a fused function with `tables` baked and install it (the switch
        lock is taken to install only); False if it was not installed."""
        tables = frozenset(tables)
        try:
            with normal_scheduling():
                built = prog.specialise(tables)
        except Exception as e:  # noqa: BLE001 - the generic function keeps running
            with self._cond:
                self._failed.add(tables)
            self._log(f"fast path not specialised ({', '.join(sorted(tables))}): "
                      f"{type(e).__name__}: {e}")
            return False
        if built is None:
            with self._cond:
                self._failed.add(tables)
            return False
        fn, src, baked = built
        if not self._install(prog, fn, src, baked):
            return False
        self.rebuilds += 1
        return True
