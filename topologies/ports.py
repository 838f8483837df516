"""Loopback TCP ports for the switches' servers (P4Runtime, Thrift).

A port is chosen by probing a bind, but the switch binds it only later, in another
process. Two runs on one machine at the same time could each probe the same free
port and hand it to a switch: the second switch then fails with "Address already in
use". So each port handed out is also *claimed*: an exclusive `flock` on a small
file named after the port, held by the run's process until it exits (the kernel
drops the lock then, also after a crash or SIGKILL, so no claim outlives its run).
Another run skips a claimed port even while nobody listens on it yet.
"""

from __future__ import annotations

import fcntl
import os
import random
import socket
import tempfile
from pathlib import Path

FIRST_PORT = 20000  # below every default ephemeral range, above the well-known ones
CLAIMS = Path(tempfile.gettempdir()) / "fabriclab-ports"

_claimed: dict[int, int] = {}  # port -> the open, locked claim file's descriptor


def ephemeral_range() -> tuple[int, int]:
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return int(low), int(high)
    except (OSError, ValueError):
        return 32768, 60999


def _claim(port: int, claims: Path) -> bool:
    """True when this process now holds `port`'s claim (another process may not)."""
    try:
        claims.mkdir(mode=0o1777, exist_ok=True)
        fd = os.open(claims / f"{port}.lock", os.O_RDWR | os.O_CREAT, 0o666)
    except OSError:
        return False  # e.g. another user's claim file: treat the port as taken
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return False
    _claimed[port] = fd
    return True


def _bindable(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def release_port(port: int) -> None:
    """Give a claimed port back (its switch is gone); unknown ports are ignored."""
    fd = _claimed.pop(port, None)
    if fd is not None:
        os.close(fd)


def free_tcp_port(claims: Path | None = None) -> int:
    """A loopback TCP port nobody listens on and no other run has claimed.

    Taken below the kernel's ephemeral range: a port from bind(0) lies inside it, and
    between choosing it and the switch binding it an outgoing connection (the SM's to
    an earlier switch) may get it. A random start keeps two runs' searches apart; the
    claim (module docstring) keeps them apart when they meet anyway."""
    claims = CLAIMS if claims is None else claims
    low, _high = ephemeral_range()
    first, last = FIRST_PORT, min(low, 32768) - 1
    if last - first > 1000:
        span = last - first + 1
        start = random.randrange(span)
        for i in range(span):
            port = first + (start + i) % span
            if port in _claimed or not _bindable(port):
                continue
            if _claim(port, claims):
                if _bindable(port):  # nobody bound it between the probe and the claim
                    return port
                release_port(port)
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
