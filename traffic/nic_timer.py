"""A timerfd on CLOCK_MONOTONIC with absolute deadlines: the NIC loop's one timer."""

from __future__ import annotations

import ctypes
import os

_libc = ctypes.CDLL(None, use_errno=True)
_CLOCK_MONOTONIC = 1
_TFD_NONBLOCK_CLOEXEC = os.O_NONBLOCK | os.O_CLOEXEC
_TFD_TIMER_ABSTIME = 1


class _Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


class _Itimerspec(ctypes.Structure):
    _fields_ = [("it_interval", _Timespec), ("it_value", _Timespec)]


class TimerFd:
    """A CLOCK_MONOTONIC timerfd armed at absolute ns deadlines (epoll's own timeout is ms)."""

    def __init__(self) -> None:
        fd = _libc.timerfd_create(_CLOCK_MONOTONIC, _TFD_NONBLOCK_CLOEXEC)
        if fd < 0:
            raise OSError(ctypes.get_errno(), "timerfd_create failed")
        self.fd = fd
        self._spec = _Itimerspec()
        self._settime = _libc.timerfd_settime
        self._ref = ctypes.byref(self._spec)

    def arm(self, due_ns: int) -> None:
        due_ns = max(due_ns, 1)  # 0 would disarm
        self._spec.it_value.tv_sec, self._spec.it_value.tv_nsec = divmod(due_ns, 1_000_000_000)
        if self._settime(self.fd, _TFD_TIMER_ABSTIME, self._ref, None) < 0:
            raise OSError(ctypes.get_errno(), "timerfd_settime failed")

    def clear(self) -> None:
        try:
            os.read(self.fd, 8)
        except BlockingIOError:
            pass

    def close(self) -> None:
        os.close(self.fd)


