"""Setting interfaces administratively up or down over rtnetlink, without `ip`.

A link fault is timed from its start (traffic/faults.py). With `ip link set` per
end, the measured detection included starting two `ip` processes (fork, exec,
the dynamic loader: 2-3 ms on a busy 2-core machine), which a cable cut does not
have. For interfaces in this process's namespace the injector now sends the
RTM_NEWLINK requests itself, every end's request before reading any answer, so
the ends go down within microseconds of each other and of the recorded start.
Interfaces in another namespace or on another server still go through `ip`.

The request: nlmsghdr (RTM_NEWLINK, NLM_F_REQUEST | NLM_F_ACK), then ifinfomsg
with the interface's index, `ifi_change = IFF_UP` and `ifi_flags` IFF_UP or 0;
the kernel answers with an NLMSG_ERROR carrying 0 or -errno.
"""

from __future__ import annotations

import errno
import os
import socket
import struct
from collections.abc import Sequence

# rtnetlink's link vocabulary, shared with the agents' carrier watch (controller/agent.py)
NETLINK_ROUTE = 0
RTMGRP_LINK = 0x1
RTM_NEWLINK, RTM_DELLINK = 16, 17
NLMSG_ERROR = 2
NLM_F_REQUEST, NLM_F_ACK = 0x1, 0x4
IFLA_IFNAME = 3
IFF_UP, IFF_LOWER_UP = 0x1, 0x10000
NLMSGHDR = struct.Struct("=IHHII")  # len, type, flags, seq, pid
IFINFOMSG = struct.Struct("=BxHiII")  # family, type, index, flags, change
RTATTR = struct.Struct("=HH")  # len, type
_ERRMSG = struct.Struct("=i")  # error (0 or -errno), then the request's header


def request(index: int, up: bool, seq: int) -> bytes:
    """The RTM_NEWLINK message that sets interface `index` up or down."""
    body = IFINFOMSG.pack(socket.AF_UNSPEC, 0, index, IFF_UP if up else 0, IFF_UP)
    return NLMSGHDR.pack(NLMSGHDR.size + len(body), RTM_NEWLINK,
                          NLM_F_REQUEST | NLM_F_ACK, seq, 0) + body


def acks(data: bytes) -> dict[int, int]:
    """seq -> error (0: done, else a positive errno) for every NLMSG_ERROR in `data`."""
    out, offset = {}, 0
    while offset + NLMSGHDR.size <= len(data):
        length, kind, _flags, seq, _pid = NLMSGHDR.unpack_from(data, offset)
        if length < NLMSGHDR.size:
            break
        if kind == NLMSG_ERROR:
            out[seq] = -_ERRMSG.unpack_from(data, offset + NLMSGHDR.size)[0]
        offset += (length + 3) & ~3
    return out


def set_state(ifnames: Sequence[str], up: bool, timeout: float = 5.0) -> list[str]:
    """Set every interface up or down at once; the problems, one line each (an
    unknown interface, a refusal), or [] when all took effect."""
    problems, pending = [], {}
    with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_ROUTE) as sock:
        sock.settimeout(timeout)
        sock.bind((0, 0))
        messages = []
        for seq, name in enumerate(ifnames, 1):
            try:
                index = socket.if_nametoindex(name)
            except OSError:
                problems.append(f"{name}: no such interface")
                continue
            pending[seq] = name
            messages.append(request(index, up, seq))
        for message in messages:  # all sent before any answer is read: ends together
            sock.send(message)
        while pending:
            try:
                data = sock.recv(65536)
            except OSError as exc:
                problems += [f"{name}: no answer from the kernel ({exc})"
                             for name in pending.values()]
                break
            for seq, err in acks(data).items():
                name = pending.pop(seq, None)
                if name is not None and err:
                    problems.append(f"{name}: {os.strerror(err)} ({errno.errorcode.get(err, err)})")
    return problems
