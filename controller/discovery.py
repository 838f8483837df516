"""Fabric discovery: PROBE frames find the links, HELLO frames find the hosts.

The SM sends a PROBE (origin switch GUID, origin port, sequence number) as a
P4Runtime packet-out of every port of every switch; the neighbour's pipeline
punts it to the SM as a packet-in carrying the port it arrived on, which
names both ends of the link. A host announces itself with a HELLO (its GUID),
punted the same way by the switch it is attached to. `compare` then checks
what was found against the intended fabric and names every missing,
unexpected or miswired link, as an operator would check cable by cable.
"""

from __future__ import annotations

import queue
import time
from collections.abc import Iterable
from dataclasses import dataclass

from controller.p4runtime_client import SwitchConnection
from topologies.description import Fabric, NodeKind
from traffic.frames import ETHERTYPE_FABRIC, FrameCodec, Kind

PROBE_CODEC = FrameCodec("Probe", ("Ethernet", "LRH", "PROBE"))
HELLO_CODEC = FrameCodec("Hello", ("Ethernet", "LRH", "HELLO"))
PERMISSIVE_LID = 0xFFFF  # InfiniBand's permissive DLID: "whoever is at the other end"
BROADCAST = 0xFFFF_FFFF_FFFF


@dataclass(frozen=True, order=True)
class PortRef:
    node: str
    port: int

    def __str__(self) -> str:
        return f"{self.node}:{self.port}"


@dataclass(frozen=True, order=True)
class FoundLink:
    """A probe sent out of `sent` arrived at `received`."""

    sent: PortRef
    received: PortRef


@dataclass(frozen=True)
class FoundHost:
    guid: int
    attached: PortRef  # switch and port the HELLO came in on


@dataclass(frozen=True)
class Discovery:
    links: frozenset[FoundLink]
    hosts: tuple[FoundHost, ...]
    unknown_probes: int  # probes from a GUID the SM did not send


def probe_frame(origin_guid: int, origin_port: int, seq: int) -> bytes:
    return PROBE_CODEC.pack(dst_addr=BROADCAST, ether_type=ETHERTYPE_FABRIC, kind=Kind.PROBE,
                            dlid=PERMISSIVE_LID, pkt_len=PROBE_CODEC.size - 14 - 8,
                            origin_guid=origin_guid, origin_port=origin_port, seq=seq)


def hello_frame(guid: int, src_mac: int = 0) -> bytes:
    return HELLO_CODEC.pack(dst_addr=BROADCAST, src_addr=src_mac, ether_type=ETHERTYPE_FABRIC,
                            kind=Kind.HELLO, dlid=PERMISSIVE_LID,
                            pkt_len=HELLO_CODEC.size - 14 - 8, guid=guid)


def discover(connections: dict[str, SwitchConnection], guids: dict[str, int],
             ports: dict[str, Iterable[int]], seq: int = 1, quiet: float = 0.3,
             timeout: float = 5.0) -> Discovery:
    """Probe every listed port of every switch and collect what comes back.

    Waits until no packet-in arrived for `quiet` seconds (or `timeout` passed).
    """
    by_guid = {guid: name for name, guid in guids.items()}
    for conn in connections.values():  # stale packet-ins are not evidence
        _drain(conn.packet_ins)
    for name, conn in connections.items():
        for port in ports.get(name, ()):
            conn.packet_out(probe_frame(guids[name], port, seq), {"egress_port": port})
    links, hosts, unknown = set(), {}, 0
    start = last = time.monotonic()
    while time.monotonic() - last < quiet and time.monotonic() - start < timeout:
        got_any = False
        for name, conn in connections.items():
            try:
                packet = conn.packet_ins.get_nowait()
            except queue.Empty:
                continue
            got_any = True
            here = PortRef(name, packet.metadata.get("ingress_port", -1))
            kind = packet.payload[15] if len(packet.payload) > 15 else None
            if kind == Kind.PROBE and len(packet.payload) >= PROBE_CODEC.size:
                probe = PROBE_CODEC.unpack(packet.payload)
                origin = by_guid.get(probe.origin_guid)
                if origin is None or probe.seq != seq:
                    unknown += 1
                else:
                    links.add(FoundLink(PortRef(origin, probe.origin_port), here))
            elif kind == Kind.HELLO and len(packet.payload) >= HELLO_CODEC.size:
                hello = HELLO_CODEC.unpack(packet.payload)
                hosts[hello.guid] = FoundHost(hello.guid, here)
        if got_any:
            last = time.monotonic()
        else:
            time.sleep(0.01)
    return Discovery(frozenset(links), tuple(hosts[g] for g in sorted(hosts)), unknown)


def compare(fabric: Fabric, found: Discovery, check_hosts: bool = True) -> list[str]:
    """One line per difference between the intended fabric and what discovery found."""
    expected: dict[PortRef, PortRef] = {}
    for link in fabric.links:
        a, b = PortRef(link.a, link.a_port), PortRef(link.b, link.b_port)
        expected[a], expected[b] = b, a
    seen = {lk.sent: lk.received for lk in found.links}
    problems = []
    switch_ports = sorted(p for p in expected if fabric.node(p.node).kind is NodeKind.SWITCH)
    for port in switch_ports:
        peer = expected[port]
        if fabric.node(peer.node).kind is NodeKind.HOST:
            continue  # host ports are checked through HELLOs below
        if port not in seen:
            problems.append(f"missing link {port} <-> {peer}: no probe out of {port} arrived")
        elif seen[port] != peer:
            problems.append(f"miswired {port}: expected {peer}, found {seen[port]}")
    for sent, received in sorted(seen.items()):
        if sent not in expected:
            problems.append(f"unexpected link {sent} <-> {received}")
    if not check_hosts:
        return problems
    hosts_by_guid = {n.guid: n.name for n in fabric.hosts}
    found_hosts = {h.guid: h.attached for h in found.hosts}
    for host in sorted(fabric.hosts, key=lambda n: n.name):
        where = expected.get(PortRef(host.name, 0))
        got = found_hosts.get(host.guid)
        if got is None:
            problems.append(f"host {host.name} (guid {host.guid:#x}) not heard from; "
                            f"expected at {where}")
        elif got != where:
            problems.append(f"host {host.name} is at {got}, expected at {where}")
    for guid, at in sorted(found_hosts.items()):
        if guid not in hosts_by_guid:
            problems.append(f"unknown host guid {guid:#x} at {at}")
    return problems


def _drain(q: queue.Queue) -> None:
    while True:
        try:
            q.get_nowait()
        except queue.Empty:
            return
