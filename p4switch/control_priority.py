"""Control-plane writes before packets: the embedded switch's scheduling knobs.

Every embedded switch is a Python process whose data-plane thread is busy
forwarding; a P4Runtime Write (an agent's fast-reroute switchover) runs on a
gRPC thread of the same process and needs the CPU, then the GIL, then the
switch lock. On a machine with many switch processes per core each of those
waits grows with the number of switches, and so did the switchover. Three
knobs bound them (docs/controller.md, "Switchover under load"):

* the GIL switch interval (`sys.setswitchinterval`): a thread waiting for the
  GIL makes the running one drop it after this long (CPython's default, 5 ms,
  is the size of a whole switchover);
* the control threads (gRPC, port status, the main thread) at SCHED_FIFO
  (`--control-rt-priority`), else at a lower nice value (`--control-nice`).
  The nice value alone does little in a run: every switch process is its own
  session (start_new_session), and with autogroup scheduling
  (/proc/sys/kernel/sched_autogroup_enabled, on by default) a thread's nice
  only ranks it within its session's group, while the groups share the cores
  equally; a woken gRPC thread waits for its group's turn behind every other
  busy switch, tens of ms with 20 switches on 2 cores. A real-time thread is
  outside that: it runs when it wakes. Work that can take long on a control
  thread (compiling a pushed program) runs at normal scheduling
  (`normal_scheduling`), so a real-time thread never holds a core for it;
* the switch lock at the next frame boundary (Switch._control): the packet loop
  lets a waiting write in between two frames instead of after a batch.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from traffic.realtime import sched_fifo

DEFAULT_SWITCH_INTERVAL_US = 500.0
DEFAULT_CONTROL_NICE = -10
DEFAULT_CONTROL_RT_PRIORITY = 10  # below the agents' 20: the agent's own work goes first
_REALTIME = (getattr(os, "SCHED_FIFO", -1), getattr(os, "SCHED_RR", -1))


class ControlPriorityError(ValueError):
    pass


def set_switch_interval(interval_us: float) -> None:
    """The GIL switch interval of this process, in microseconds."""
    if not interval_us > 0:
        raise ControlPriorityError(f"--switch-interval-us must be positive, got {interval_us}")
    sys.setswitchinterval(interval_us / 1e6)


def set_thread_nice(nice: int, tid: int | None = None) -> str | None:
    """Give one thread (default: the calling one) the nice value `nice`.

    Linux keeps a nice value per thread (PRIO_PROCESS with a thread id) and a new
    thread inherits its creator's, so calling this in the main thread after the
    data-plane thread started and before the gRPC server starts raises every
    control thread and leaves the packet loop where it was. Returns None when it
    took effect, else a one-line note saying why not (no CAP_SYS_NICE, say): the
    switch then runs as before.
    """
    if not -20 <= nice <= 19:
        raise ControlPriorityError(f"--control-nice must be in -20..19, got {nice}")
    tid = threading.get_native_id() if tid is None else tid
    try:
        os.setpriority(os.PRIO_PROCESS, tid, nice)
    except (OSError, AttributeError) as e:
        reason = getattr(e, "strerror", None) or str(e)
        return f"control threads stay at nice {thread_nice(tid)} (nice {nice}: {reason})"
    return None


def thread_nice(tid: int) -> int | None:
    """The nice value of one thread of this process (None if it has gone)."""
    try:
        return os.getpriority(os.PRIO_PROCESS, tid)
    except OSError:
        return None


def set_thread_realtime(priority: int) -> str | None:
    """SCHED_FIFO at `priority` for the calling thread (and the threads it starts
    later, which inherit it; traffic/realtime.py). None when it took effect, else a
    one-line note."""
    if not 1 <= priority <= 99:
        raise ControlPriorityError(f"--control-rt-priority must be in 0..99, got {priority}")
    why = sched_fifo(priority)
    return None if why is None else f"control threads at normal scheduling ({why})"


@contextmanager
def normal_scheduling() -> Iterator[None]:
    """Run a long piece of work of a real-time control thread at normal scheduling,
    then put the thread back (nothing to do for a thread that is not real-time)."""
    try:
        policy = os.sched_getscheduler(0)
    except (OSError, AttributeError):
        policy = None
    if policy not in _REALTIME:
        yield
        return
    param = os.sched_getparam(0)
    try:
        os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
    except OSError:
        yield
        return
    try:
        yield
    finally:
        try:
            os.sched_setscheduler(0, policy, param)
        except OSError:
            pass  # stays at normal scheduling: slower writes, never a stuck core
