"""The local agent of one switch: carrier loss -> port marked down at once -> SM told.

Fast reroute needs the data plane to stop using a dead port before any
controller round trip: the agent watches the carrier of its switch's
interfaces and, the moment one drops, writes 1 into the `port_down` register
(p4src/include/reroute.p4) over P4Runtime; every route whose primary is that
port then leaves on its backup. Then it reports the event to the SM, which
recomputes routes for the fabric without that link and installs what changed
(global reroute). When the carrier returns it writes 0 and reports again.

Detection: a raw AF_NETLINK / NETLINK_ROUTE socket subscribed to RTMGRP_LINK
(pyroute2 is not installed; the messages are small and parsed here). The
kernel multicasts RTM_NEWLINK as the carrier changes, so detection costs one
wake-up, typically well under a millisecond after the kernel notices (veth:
when the peer goes down; a real NIC: after its PHY reports loss), instead of
up to a polling interval (10 ms for /sys/class/net/IF/carrier polling).
Carrier up = IFF_UP and IFF_LOWER_UP in ifi_flags; RTM_DELLINK = down.

The agent uses its own P4Runtime connection under the role `AGENT_ROLE`, so
it is primary for its role while the SM stays primary for the default role
(the embedded switch gives every role full access; with bmv2 the role needs
the same register access in its role config).
"""

from __future__ import annotations

import select
import socket
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from controller.p4runtime_client import SwitchConnection

AGENT_ROLE = "fabriclab.agent"
LIVENESS_REGISTER = "port_down"  # reroute.p4; 1 = down

NETLINK_ROUTE = 0
RTMGRP_LINK = 0x1
RTM_NEWLINK, RTM_DELLINK = 16, 17
IFLA_IFNAME = 3
IFF_UP, IFF_LOWER_UP = 0x1, 0x10000
_NLMSGHDR = struct.Struct("=IHHII")  # len, type, flags, seq, pid
_IFINFOMSG = struct.Struct("=BxHiII")  # family, type, index, flags, change
_RTATTR = struct.Struct("=HH")  # len, type


@dataclass(frozen=True)
class CarrierEvent:
    ifname: str
    up: bool
    t_ns: int  # time.time_ns() when the agent read it (wall clock, as pcap timestamps)


@dataclass(frozen=True)
class PortEvent:
    """What an agent reports to the SM."""

    switch: str
    port: int
    up: bool
    detected_ns: int
    switchover_ns: int  # the liveness register write returned (0: the write failed)
    error: str = ""


def parse_link_messages(data: bytes) -> list[tuple[str, bool]]:
    """(ifname, carrier up) for every RTM_NEWLINK / RTM_DELLINK in a netlink datagram."""
    out = []
    offset = 0
    while offset + _NLMSGHDR.size <= len(data):
        length, kind, _flags, _seq, _pid = _NLMSGHDR.unpack_from(data, offset)
        if length < _NLMSGHDR.size:
            break
        if kind in (RTM_NEWLINK, RTM_DELLINK):
            body = offset + _NLMSGHDR.size
            _family, _type, _index, flags, _change = _IFINFOMSG.unpack_from(data, body)
            attr = body + _IFINFOMSG.size
            name = None
            while attr + _RTATTR.size <= offset + length:
                alen, atype = _RTATTR.unpack_from(data, attr)
                if alen < _RTATTR.size:
                    break
                if atype == IFLA_IFNAME:
                    name = data[attr + 4:attr + alen].split(b"\0", 1)[0].decode()
                attr += (alen + 3) & ~3
            if name is not None:
                up = kind == RTM_NEWLINK and flags & IFF_UP and flags & IFF_LOWER_UP
                out.append((name, bool(up)))
        offset += (length + 3) & ~3
    return out


def carrier_now(ifname: str) -> bool:
    """The carrier as sysfs says now (False for a missing or admin-down interface)."""
    try:
        return Path(f"/sys/class/net/{ifname}/carrier").read_text().strip() == "1"
    except OSError:
        return False


class CarrierWatcher:
    """Netlink link notifications for a set of interfaces, reported only on change."""

    def __init__(self, ifnames: list[str]) -> None:
        self.state = {name: carrier_now(name) for name in ifnames}
        self.sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_ROUTE)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
        self.sock.bind((0, RTMGRP_LINK))  # port id 0: the kernel picks one
        # a change between the sysfs read above and the bind would be missed: re-read
        self.state = {name: carrier_now(name) for name in ifnames}

    def events(self, timeout: float) -> list[CarrierEvent]:
        ready, _, _ = select.select([self.sock], [], [], timeout)
        if not ready:
            return []
        data = self.sock.recv(1 << 16)
        now = time.time_ns()
        out = []
        for name, up in parse_link_messages(data):
            if name in self.state and self.state[name] != up:
                self.state[name] = up
                out.append(CarrierEvent(name, up, now))
        return out

    def close(self) -> None:
        self.sock.close()


class LocalAgent:
    """Watches one switch's interfaces; flips liveness at once, then reports."""

    def __init__(self, switch: str, conn: SwitchConnection, ports: dict[str, int],
                 report: Callable[[PortEvent], None]) -> None:
        self.switch = switch
        self.conn = conn
        self.ports = ports  # interface name -> switch port
        self.report = report
        self.watcher = CarrierWatcher(sorted(ports))
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name=f"agent-{switch}")

    def start(self) -> LocalAgent:
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.is_set():
            for event in self.watcher.events(timeout=0.1):
                self.handle(event)

    def handle(self, event: CarrierEvent) -> PortEvent:
        port = self.ports[event.ifname]
        error = ""
        try:
            self.conn.write_register(LIVENESS_REGISTER, port, 0 if event.up else 1)
            switchover_ns = time.time_ns()
        except Exception as exc:  # noqa: BLE001 -- the SM must hear about the port anyway
            switchover_ns, error = 0, f"{type(exc).__name__}: {exc}"
        report = PortEvent(self.switch, port, event.up, event.t_ns, switchover_ns, error)
        self.report(report)
        return report

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        self.watcher.close()
