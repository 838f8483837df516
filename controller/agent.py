"""The local agent of one switch: carrier loss -> port marked down at once -> SM told.

Fast reroute needs the data plane to stop using a dead port before any
controller round trip: the agent watches the carrier of its switch's
interfaces and, the moment one drops, marks it down in fabric.p4's
`port_liveness` table (controller/liveness.py: the default action's port mask)
over P4Runtime; every route whose primary is that port then leaves on its
backup. Then it reports the event to the SM, which recomputes routes for the
fabric without that link and installs what changed (global reroute). When the
carrier returns it marks the port up and reports again.

Detection: a raw AF_NETLINK / NETLINK_ROUTE socket subscribed to RTMGRP_LINK
(pyroute2 is not installed; the messages are small and parsed here). The
kernel multicasts RTM_NEWLINK as the carrier changes, so detection costs one
wake-up, typically well under a millisecond after the kernel notices (veth:
when the peer goes down; a real NIC: after its PHY reports loss), instead of
up to a polling interval (10 ms for /sys/class/net/IF/carrier polling).
Carrier up = IFF_UP and IFF_LOWER_UP in ifi_flags; RTM_DELLINK = down.

The agent uses its own P4Runtime connection (`connect_agent`). Where the
switch keeps a primary per role (the embedded switch), it is primary for the
role `AGENT_ROLE` while the SM stays primary for the default role, so it works
with or without the SM. bmv2's simple_switch_grpc ignores role names (one
primary per device: the agent would be a backup of the SM and could not
write), so there the agent writes without arbitrating, with the SM's election
id: a P4Runtime server accepts a Write that carries the primary's election id
(the spec's check; PI and the embedded switch both make it), so the agent acts
for the fabric's controller and still writes the moment the carrier drops,
never waiting for the SM; it needs the SM to hold the switch.

In a run the agent is a process per switch, as a switch-local agent would be
(a stalled or busy SM never delays a switchover):

    python -m controller.agent --switch s1 --grpc 127.0.0.1:50001 --device-id 1 \
        --p4info build/fabric.p4info.txtpb --ports s1-eth2=2,s1-eth3=3 \
        --report results/run/sm-reports.sock

It reports over the SM's report socket (controller/port_reports.py), says
"ready" once it watches its ports, and stops on SIGTERM. It runs at SCHED_FIFO
priority `--rt-priority` (default 20; 0 = the normal scheduler) where the OS
permits: it sleeps until a carrier changes, and then it must not wait behind
the switches' packet loops for a core (docs/controller.md, "Switchover under
load"). Where it is not permitted the agent says so in one line of its log and
runs as before. `LocalAgent` with a
callback is the same agent inside another process (`fabriclab-sm serve`).
"""

from __future__ import annotations

import argparse
import select
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from controller import netlink_filter
from controller.liveness import Liveness
from controller.p4info import P4InfoError
from controller.p4runtime_client import (
    NotPrimaryError,
    SwitchConnection,
    SwitchConnectionError,
    SwitchRpcError,
)
from traffic.link_state import (  # rtnetlink's link vocabulary
    IFF_LOWER_UP,
    IFF_UP,
    IFINFOMSG,
    IFLA_IFNAME,
    NETLINK_ROUTE,
    NLMSGHDR,
    RTATTR,
    RTM_DELLINK,
    RTM_NEWLINK,
    RTMGRP_LINK,
)
from traffic.realtime import AGENT_RT_PRIORITY, sched_fifo

AGENT_ROLE = "fabriclab.agent"
DEFAULT_RT_PRIORITY = AGENT_RT_PRIORITY



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
    switchover_ns: int  # the liveness write returned (0: the write failed)
    error: str = ""


def parse_link_messages(data: bytes) -> list[tuple[str, bool]]:
    """(ifname, carrier up) for every RTM_NEWLINK / RTM_DELLINK in a netlink datagram."""
    out = []
    offset = 0
    while offset + NLMSGHDR.size <= len(data):
        length, kind, _flags, _seq, _pid = NLMSGHDR.unpack_from(data, offset)
        if length < NLMSGHDR.size:
            break
        if kind in (RTM_NEWLINK, RTM_DELLINK):
            body = offset + NLMSGHDR.size
            _family, _type, _index, flags, _change = IFINFOMSG.unpack_from(data, body)
            attr = body + IFINFOMSG.size
            name = None
            while attr + RTATTR.size <= offset + length:
                alen, atype = RTATTR.unpack_from(data, attr)
                if alen < RTATTR.size:
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
    """Netlink link notifications for a set of interfaces, reported only on change.

    A socket filter (controller/netlink_filter.py) keeps the kernel from waking this
    process for other interfaces' changes. It matches interface indexes, so it is on
    only while every watched interface exists: when one is deleted (or missing at
    the start) the filter comes off and every link message is read by name, as
    without one, until the interface is back; then it goes on with the new index."""

    def __init__(self, ifnames: list[str]) -> None:
        self.state = {name: carrier_now(name) for name in ifnames}
        self.sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_ROUTE)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
        self.filtered = False
        self._filter()
        self.sock.bind((0, RTMGRP_LINK))  # port id 0: the kernel picks one
        # a change between the sysfs read above and the bind would be missed: re-read
        self.state = {name: carrier_now(name) for name in ifnames}

    def _filter(self) -> None:
        try:
            indexes = [socket.if_nametoindex(name) for name in self.state]
            netlink_filter.attach(self.sock, indexes)
            self.filtered = True
        except (ValueError, OSError):  # one is missing (or too many to filter)
            netlink_filter.detach(self.sock)
            self.filtered = False

    def events(self, timeout: float) -> list[CarrierEvent]:
        ready, _, _ = select.select([self.sock], [], [], timeout)
        if not ready:
            return []
        data = self.sock.recv(1 << 16)
        now = time.time_ns()
        out = []
        refilter = False
        for name, up in parse_link_messages(data):
            if name not in self.state:
                continue
            if self.state[name] != up:
                self.state[name] = up
                out.append(CarrierEvent(name, up, now))
            # filtered but gone, or unfiltered and back: the filter may change
            refilter |= Path(f"/sys/class/net/{name}").exists() != self.filtered
        if refilter:
            self._filter()
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
        self.liveness = Liveness(conn)
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
            self.liveness.set(port, event.up)
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


def connect_agent(switch: str, address: str, device_id: int, p4info: str | Path,
                  election_id: tuple[int, int] = (1, 0)) -> SwitchConnection:
    """The agent's connection: primary of AGENT_ROLE where the switch keeps a primary
    per role, else (bmv2: one primary per device) a connection without arbitration
    whose writes carry the SM's election id (see the module doc)."""
    from controller.sm import SM_ELECTION_ID

    try:
        conn = SwitchConnection(f"{switch}-agent", address, device_id, election_id,
                                role=AGENT_ROLE)
    except NotPrimaryError:
        conn = SwitchConnection(f"{switch}-agent", address, device_id, SM_ELECTION_ID,
                                observe_only=True)
    conn.use_p4info(p4info)
    return conn


def set_realtime_priority(priority: int) -> str | None:
    """SCHED_FIFO at `priority` for the calling thread and the threads it starts later
    (call it first thing; traffic/realtime.py). Returns None when it took effect, else a
    one-line note saying why not; 0 asks for nothing."""
    why = sched_fifo(priority)
    return None if why is None else f"normal scheduling ({why})"


def parse_ports(spec: str) -> dict[str, int]:
    """"s1-eth1=1,s1-eth2=2" -> {"s1-eth1": 1, "s1-eth2": 2}."""
    ports = {}
    for item in filter(None, (part.strip() for part in spec.split(","))):
        ifname, sep, port = item.partition("=")
        if not sep or not ifname or not port.isdigit():
            raise ValueError(f"--ports item {item!r}: expected IFNAME=PORT")
        ports[ifname] = int(port)
    if not ports:
        raise ValueError("--ports: no interface given")
    return ports


def main(argv: list[str] | None = None) -> int:
    """The agent of one switch as a process (fabriclab-agent); see the module doc."""
    from controller.port_reports import ReportAddressError, ReportClient

    parser = argparse.ArgumentParser(
        prog="fabriclab-agent",
        description="Local agent of one switch: carrier loss -> port marked down -> report "
                    "to the SM.")
    parser.add_argument("--switch", required=True, help="switch name, e.g. s1")
    parser.add_argument("--grpc", required=True, metavar="HOST:PORT",
                        help="the switch's P4Runtime address")
    parser.add_argument("--device-id", type=int, required=True)
    parser.add_argument("--p4info", required=True, help="P4Info of the pushed pipeline")
    parser.add_argument("--ports", required=True, metavar="IF=PORT,...",
                        help="interfaces to watch and their switch ports")
    parser.add_argument("--report", required=True, metavar="ADDRESS",
                        help="the SM's report socket: a unix socket path or 127.0.0.1:PORT")
    parser.add_argument("--election-id", type=int, default=1,
                        help="election id (high word) for the agent role")
    parser.add_argument("--rt-priority", type=int, default=DEFAULT_RT_PRIORITY,
                        help="SCHED_FIFO priority where permitted (1-99; 0: normal "
                             f"scheduling; default {DEFAULT_RT_PRIORITY})")
    args = parser.parse_args(argv)
    try:
        ports = parse_ports(args.ports)
    except ValueError as exc:
        parser.error(str(exc))
    if not 0 <= args.rt_priority <= 99:
        parser.error(f"--rt-priority must be in 0..99, got {args.rt_priority}")
    note = set_realtime_priority(args.rt_priority)
    if note is not None:
        print(f"fabriclab-agent: {args.switch}: note: {note}", flush=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    try:
        client = ReportClient(args.report)
    except (ReportAddressError, ConnectionError) as exc:
        print(f"fabriclab-agent: error: {exc}", file=sys.stderr)
        return 2
    def report(event: PortEvent) -> None:
        try:
            client.port_event(event)
        except (OSError, ConnectionError) as exc:  # the switchover is written regardless
            print(f"fabriclab-agent: {args.switch}: report of {event} lost: {exc}",
                  file=sys.stderr, flush=True)

    conn = None
    try:
        conn = connect_agent(args.switch, args.grpc, args.device_id, args.p4info,
                             (args.election_id, 0))
        agent = LocalAgent(args.switch, conn, ports, report).start()
    except (SwitchConnectionError, SwitchRpcError, P4InfoError, OSError, ValueError) as exc:
        print(f"fabriclab-agent: error: {args.switch}: {exc}", file=sys.stderr)
        if conn is not None:
            conn.close()
        client.close()
        return 2
    try:
        client.ready(args.switch, ports)
        print(f"agent {args.switch}: watching {', '.join(sorted(ports))}, "
              f"reporting to {args.report}", flush=True)
        stop.wait()
    finally:
        agent.stop()
        conn.close()
        client.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
