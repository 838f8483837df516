"""The NIC's packet socket: AF_PACKET without our own transmissions, its drop count."""

from __future__ import annotations

import errno
import socket
import struct
from pathlib import Path

from traffic.nic_config import PACKET_IGNORE_OUTGOING, PACKET_STATISTICS, SOL_PACKET, NicConfigError


def open_nic_socket(iface: str, bufsize: int = 8 << 20) -> socket.socket:
    """AF_PACKET socket on iface that does not see its own transmissions (needs CAP_NET_RAW)."""
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))  # ETH_P_ALL
    try:
        sock.setsockopt(SOL_PACKET, PACKET_IGNORE_OUTGOING, 1)
        for opt, force in ((socket.SO_SNDBUF, 32), (socket.SO_RCVBUF, 33)):  # *BUFFORCE
            try:
                sock.setsockopt(socket.SOL_SOCKET, force, bufsize)
            except PermissionError:
                sock.setsockopt(socket.SOL_SOCKET, opt, bufsize)
        sock.bind((iface, 0))
    except OSError:
        sock.close()
        raise
    return sock


def link_down_error(exc: OSError) -> bool:
    """Our own interface is down (a link fault on this host's cable): a send is refused
    while it lasts, and a receive reports it once. The NIC carries on as over a cut cable:
    a frame it sends then is lost on the failed link."""
    return exc.errno == errno.ENETDOWN


def socket_drops(sock: socket.socket) -> int | None:
    """Frames the kernel dropped for this packet socket (receive buffer full) since last read."""
    try:
        _packets, drops = struct.unpack("II", sock.getsockopt(SOL_PACKET, PACKET_STATISTICS, 8))
    except OSError:
        return None
    return drops


def iface_mac(iface: str) -> str:
    try:
        return Path(f"/sys/class/net/{iface}/address").read_text().strip()
    except OSError as exc:
        raise NicConfigError(f"no interface {iface!r} here ({exc.strerror})") from None
