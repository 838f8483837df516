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
* a lower nice value for the control threads (gRPC, port status, the main
  thread): the kernel picks them before the data-plane thread and before other
  switches' packet loops when they wake up;
* the switch lock at the next frame boundary (Switch._control): the packet loop
  lets a waiting write in between two frames instead of after a batch.
"""

from __future__ import annotations

import os
import sys
import threading

DEFAULT_SWITCH_INTERVAL_US = 500.0
DEFAULT_CONTROL_NICE = -10


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
