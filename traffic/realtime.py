"""Real-time scheduling for the threads that must not wait behind busy packet loops: the
agents (controller/agent.py), the embedded switch's control threads
(p4switch/control_priority.py) and the fault injector (traffic/faults.py).

One home for the SCHED_FIFO call and the priorities they share; it imports only the
standard library, so controller/, p4switch/ and traffic/ all import it without a cycle.
On a machine with more busy processes than cores a woken thread at normal scheduling
waits for its session's turn (autogroup), tens of ms with 20 switches on 2 cores
(docs/controller.md, "Switchover under load"); a real-time thread runs when it wakes.
The kernel's RT throttling (/proc/sys/kernel/sched_rt_runtime_us, 95% of each
second) bounds a runaway.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

# The weight of each switch's session (autogroup nice, -20..19; 0 is a plain session's):
# a switch and its hold relay each run in a session of their own, and with the kernel's
# autogroup (on in Debian) the CPU is shared between sessions first. At -5 a switch's
# session weighs 3x a plain one, so other work on the machine (a test suite's other part,
# a compile) slows the emulated fabric less, without the runaway risk of real time
# (topologies/cpu_wait.py measures what the switches still waited).
SWITCH_SESSION_NICE = -5
AGENT_RT_PRIORITY = 20  # agents, and the fault injector whose timing their detection is
                        # measured from; above the switches' control threads (10)


def sched_fifo(priority: int) -> str | None:
    """SCHED_FIFO at `priority` for the calling thread; the threads it starts afterwards
    and the processes it spawns inherit it. None when it took effect (or 0: nothing
    asked), else why not, as "SCHED_FIFO N: reason" (no CAP_SYS_NICE, a priority the
    kernel refuses); the caller then runs at normal scheduling."""
    if priority == 0:
        return None
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(priority))
    except (OSError, AttributeError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        return f"SCHED_FIFO {priority}: {reason}"
    return None


@contextmanager
def realtime(priority: int) -> Iterator[str | None]:
    """The calling thread at SCHED_FIFO `priority` for the block (what it spawns
    inherits it), then back to normal scheduling; yields `sched_fifo`'s answer (None:
    in effect). For short work only: a spawned process that lives on keeps it."""
    why = sched_fifo(priority)
    try:
        yield why
    finally:
        if priority and why is None:
            try:
                os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
            except OSError:
                pass  # stays real-time: it only ever runs short fault actions


def weigh_session(pid: int, nice: int) -> str | None:
    """Give the session (autogroup) that process `pid` leads the weight of `nice`. None
    when it took effect, else why not (no autogroup in this kernel, no CAP_SYS_NICE for
    a negative value, the process gone)."""
    try:
        with open(f"/proc/{pid}/autogroup", "w") as f:
            f.write(str(nice))
    except OSError as exc:
        return f"autogroup nice {nice}: {exc.strerror or exc}"
    return None
