"""Discovery over (fake) switches wired like a fabric: links from PROBEs, hosts from HELLOs,
and every difference from the intended fabric named."""

from __future__ import annotations

import dataclasses

import pytest

from controller.discovery import compare, discover, hello_frame
from controller.p4info import decode, encode
from controller.p4runtime_client import SwitchConnection
from topologies.generators import build

REASON_PROBE = 3


@pytest.fixture
def wired(fake_fabric_switches, p4info_path):
    """wire(physical fabric) -> connections: packet-outs reach the neighbour as packet-ins."""
    conns: dict[str, SwitchConnection] = {}

    def wire(physical):
        servers = {}
        for sw in physical.switches:
            servers[sw.name], address = fake_fabric_switches(sw.name)
            conns[sw.name] = SwitchConnection(sw.name, address, device_id=sw.device_id)
            conns[sw.name].use_p4info(p4info_path)
        for name, server in servers.items():
            def deliver(packet, here=name):
                port = decode(packet.metadata[0].value)  # egress_port
                for own, peer, peer_port in physical.neighbours(here):
                    if own == port and peer in servers:
                        servers[peer].send_packet_in(
                            packet.payload, {1: encode(peer_port, 16), 2: encode(REASON_PROBE, 16)})
            server.packet_out_handler = deliver
        return conns, servers

    yield wire
    for conn in conns.values():
        conn.close()


def ports_of(fabric):
    return {s.name: [p for p, _, _ in fabric.neighbours(s.name)] for s in fabric.switches}


def say_hello(fabric, servers, hosts=None):
    for host in fabric.hosts:
        if hosts is not None and host.name not in hosts:
            continue
        switch, port = fabric.host_switch(host.name)
        servers[switch].send_packet_in(hello_frame(host.guid), {1: encode(port, 16)})


def test_a_correctly_wired_fabric_has_no_differences(wired):
    fabric = build("leafspine:2,2,1")
    conns, servers = wired(fabric)
    say_hello(fabric, servers)
    found = discover(conns, {s.name: s.guid for s in fabric.switches}, ports_of(fabric),
                     quiet=0.2)
    assert len(found.links) == 8  # 4 cables, probed from both ends
    assert compare(fabric, found) == []


def test_a_swapped_cable_and_a_silent_host_are_named(wired):
    intended = build("leafspine:2,2,1")
    # s1 has ports 1 (h1), 2 (s3), 3 (s4): swap its two uplinks on the "real" fabric
    links = []
    for lk in intended.links:
        if lk.a == "s1" and lk.a_port in (2, 3):
            lk = dataclasses.replace(lk, a_port=5 - lk.a_port)
        links.append(lk)
    physical = dataclasses.replace(intended, links=tuple(links))
    conns, servers = wired(physical)
    say_hello(physical, servers, hosts={"h1"})
    found = discover(conns, {s.name: s.guid for s in intended.switches}, ports_of(intended),
                     quiet=0.2)
    problems = compare(intended, found)
    assert "miswired s1:2: expected s3:1, found s4:1" in problems
    assert "miswired s1:3: expected s4:1, found s3:1" in problems
    assert any(p.startswith("host h2 ") and "not heard from" in p for p in problems)


def test_a_missing_cable_is_named(wired):
    intended = build("line:3")
    cut = tuple(lk for lk in intended.links if {lk.a, lk.b} != {"s2", "s3"})
    conns, _ = wired(dataclasses.replace(intended, links=cut))
    found = discover(conns, {s.name: s.guid for s in intended.switches}, ports_of(intended),
                     quiet=0.2)
    problems = [p for p in compare(intended, found) if not p.startswith("host")]
    assert problems == ["missing link s2:3 <-> s3:2: no probe out of s2:3 arrived",
                        "missing link s3:2 <-> s2:3: no probe out of s3:2 arrived"]
