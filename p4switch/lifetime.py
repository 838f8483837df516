"""A child process that ends with the thread that started it (Linux PR_SET_PDEATHSIG).

`die_with_parent()` is safe between fork and exec (a subprocess `preexec_fn`): prctl is
resolved here, at import, because resolving it in the child would dlopen, which takes a
lock another thread of the parent may have held at the fork.
"""

from __future__ import annotations

import ctypes
import signal

PR_SET_PDEATHSIG = 1

try:
    _PRCTL = ctypes.CDLL(None, use_errno=True).prctl
except (OSError, AttributeError):  # not Linux: nothing to tie
    _PRCTL = None


def die_with_parent() -> None:
    """SIGKILL this process when the thread that started it ends."""
    if _PRCTL is not None:
        _PRCTL(PR_SET_PDEATHSIG, signal.SIGKILL)
