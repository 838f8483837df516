"""The switch's view of the OS: raw sockets on interfaces, pcap files, carrier
state and a microsecond timer for epoll."""

from __future__ import annotations

import ctypes
import errno
import os
import socket
import struct
import time

ETH_P_ALL = 0x0003
SOL_PACKET = 263
PACKET_IGNORE_OUTGOING = 23
SOCKET_BUFFER = 8 * 1024 * 1024
SO_RCVBUFFORCE = 33
SO_SNDBUFFORCE = 32


class PortError(OSError):
    """An interface the switch was told to use cannot be used."""


def open_port(iface: str) -> socket.socket:
    """A non-blocking AF_PACKET socket bound to `iface` that does not see its own sends."""
    if not os.path.exists(f"/sys/class/net/{iface}"):
        raise PortError(f"interface {iface!r} does not exist")
    try:
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    except PermissionError:
        raise PortError(f"interface {iface!r}: raw sockets need root (CAP_NET_RAW)") from None
    try:
        s.bind((iface, 0))
    except OSError as e:
        s.close()
        raise PortError(f"interface {iface!r}: {e.strerror}") from None
    try:
        s.setsockopt(SOL_PACKET, PACKET_IGNORE_OUTGOING, 1)
    except OSError:
        pass  # kernels before 4.20: we would see our own frames; nothing else to do
    for force, plain in ((SO_RCVBUFFORCE, socket.SO_RCVBUF), (SO_SNDBUFFORCE, socket.SO_SNDBUF)):
        try:
            s.setsockopt(socket.SOL_SOCKET, force, SOCKET_BUFFER)
        except OSError:
            s.setsockopt(socket.SOL_SOCKET, plain, SOCKET_BUFFER)
    s.setblocking(False)
    return s


def frame_buffer_size(iface: str) -> int:
    """Receive buffer for one frame: the MTU plus Ethernet and VLAN headers.

    Asking recv() for 64 KiB per frame costs an allocation and a shrink per
    packet; the MTU bounds what the interface can deliver."""
    try:
        with open(f"/sys/class/net/{iface}/mtu") as f:
            return max(int(f.read()), 1500) + 32
    except (OSError, ValueError):
        return 65535


def carrier(iface: str) -> bool:
    """True if the interface is administratively up and has carrier."""
    try:
        with open(f"/sys/class/net/{iface}/carrier", "rb") as f:
            return f.read(1) == b"1"
    except OSError:  # down interfaces refuse to report carrier (EINVAL)
        return False


class PcapWriter:
    """A classic libpcap file (microsecond timestamps, Ethernet link type)."""

    def __init__(self, path: str):
        self.f = open(path, "wb", buffering=1 << 16)
        self.f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        self._rec = struct.Struct("<IIII").pack

    def write(self, frame: bytes, ts: float | None = None) -> None:
        if ts is None:
            ts = time.time()
        sec = int(ts)
        n = len(frame)
        self.f.write(self._rec(sec, int((ts - sec) * 1e6), n, n))
        self.f.write(frame)

    def flush(self) -> None:
        self.f.flush()

    def close(self) -> None:
        self.f.close()


class _Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


class _Itimerspec(ctypes.Structure):
    _fields_ = [("it_interval", _Timespec), ("it_value", _Timespec)]


class DeadlineTimer:
    """A timerfd on CLOCK_MONOTONIC (time.monotonic's clock) armed at absolute
    deadlines, so epoll wakes with microsecond rather than millisecond precision.
    Falls back to epoll timeouts (`fd` is None) where timerfd is unavailable."""

    CLOCK_MONOTONIC = 1
    TFD_NONBLOCK = os.O_NONBLOCK
    TFD_CLOEXEC = os.O_CLOEXEC
    TFD_TIMER_ABSTIME = 1

    def __init__(self):
        self.fd: int | None = None
        self.armed: float | None = None
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            self._settime = libc.timerfd_settime
            fd = libc.timerfd_create(self.CLOCK_MONOTONIC, self.TFD_NONBLOCK | self.TFD_CLOEXEC)
            if fd >= 0:
                self.fd = fd
        except (OSError, AttributeError):
            self.fd = None
        self._spec = _Itimerspec()

    def arm(self, deadline: float | None) -> None:
        if deadline == self.armed or self.fd is None:
            return
        self.armed = deadline
        v = self._spec.it_value
        if deadline is None:
            v.tv_sec = v.tv_nsec = 0
        else:
            sec = int(deadline)
            v.tv_sec = sec
            v.tv_nsec = max(1, int((deadline - sec) * 1e9)) if sec > 0 else 1
        if self._settime(self.fd, self.TFD_TIMER_ABSTIME, ctypes.byref(self._spec), None) != 0:
            raise OSError(ctypes.get_errno(), "timerfd_settime failed")

    def consume(self) -> None:
        """Acknowledge an expiry (called when epoll reports the fd readable)."""
        self.armed = None
        try:
            os.read(self.fd, 8)
        except BlockingIOError:
            pass
        except OSError as e:
            if e.errno != errno.EAGAIN:
                raise

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


# -- link state changes ------------------------------------------------------------------
NETLINK_ROUTE = 0
RTMGRP_LINK = 1


class LinkMonitor:
    """A netlink socket subscribed to RTMGRP_LINK: readable when an interface's
    state changes (carrier, admin up/down, deletion), so the switch learns about
    carrier changes without polling. `drain()` empties it and returns True if
    something happened (or messages were lost), i.e. carrier is worth re-reading.
    Raises OSError where netlink is unavailable; the caller then polls."""

    def __init__(self):
        self.sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_ROUTE)
        try:
            self.sock.bind((0, RTMGRP_LINK))
            self.sock.setblocking(False)
        except OSError:
            self.sock.close()
            raise

    def fileno(self) -> int:
        return self.sock.fileno()

    def drain(self) -> bool:
        changed = False
        while True:
            try:
                data = self.sock.recv(65536)
            except BlockingIOError:
                return changed
            except OSError as e:
                if e.errno == errno.ENOBUFS:  # overrun: messages lost, look anyway
                    changed = True
                    continue
                return True
            if not data:
                return changed
            changed = True

    def close(self) -> None:
        self.sock.close()
