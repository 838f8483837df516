"""Wired links on bmv2 (topologies/wires.py): names, where a cut is made, and a real cut.

The netns part needs root; it creates `fbwt-sa-eth1`/`fbwt-sb-eth1` and their wire ends
in the current namespace and removes them by name afterwards, also when a test fails.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from topologies import link_names, wires
from topologies.generators import build
from topologies.network import EmulatedNetwork
from topologies.targets import Compiler, SwitchKind, Target


def test_wire_name_is_the_port_name_with_w_and_never_longer():
    assert wires.wire_name("fk3-s1-eth2") == "fk3-s1-w2"
    assert wires.wire_name("fk3-s120-eth48") == "fk3-s120-w48"
    for bad in ("fk3-s1", "fk3-s1-ethx", "eth"):
        with pytest.raises(wires.WireError, match="not a switch port name"):
            wires.wire_name(bad)


def _net(switch: SwitchKind, servers=None):
    fabric = build("leafspine:2,2,1")
    target = Target(compiler=Compiler.EMBEDDED, switch=switch, reason="test")
    return SimpleNamespace(
        fabric=fabric, target=target, servers=servers,
        intf=lambda node, port: link_names.kernel_interface("fk3-", node, port))


def test_a_cut_on_bmv2_takes_the_wire_down_and_never_a_switch_port_facing_a_host():
    net = _net(SwitchKind.BMV2)
    fabric = net.fabric
    between = next(lk for lk in fabric.links if lk.a.startswith("s") and lk.b.startswith("s"))
    to_host = next(lk for lk in fabric.links if lk.b.startswith("h") or lk.a.startswith("h"))
    assert EmulatedNetwork.cut_point(net, between.a, between.a_port) == \
        wires.wire_name(net.intf(between.a, between.a_port))
    sw, sw_port, host, host_port = ((to_host.a, to_host.a_port, to_host.b, to_host.b_port)
                                    if to_host.a.startswith("s") else
                                    (to_host.b, to_host.b_port, to_host.a, to_host.a_port))
    assert EmulatedNetwork.cut_point(net, sw, sw_port) is None
    assert EmulatedNetwork.cut_point(net, host, host_port) == net.intf(host, host_port)


@pytest.mark.parametrize("servers", [None, object()])
def test_a_cut_on_the_embedded_switch_or_on_servers_takes_the_ports_down(servers):
    switch = SwitchKind.EMBEDDED if servers is None else SwitchKind.BMV2
    net = _net(switch, servers)
    for lk in net.fabric.links:
        for node, port in ((lk.a, lk.a_port), (lk.b, lk.b_port)):
            assert EmulatedNetwork.cut_point(net, node, port) == net.intf(node, port)


# --------------------------------------------------------------------------- a real wire

PORT_A, PORT_B = "fbwt-sa-eth1", "fbwt-sb-eth1"


def _flags(iface: str) -> int:
    return int(open(f"/sys/class/net/{iface}/flags").read(), 16)


def _rx(iface: str) -> int:
    return int(open(f"/sys/class/net/{iface}/statistics/rx_packets").read())


def _send(iface: str, count: int) -> None:
    with socket.socket(socket.AF_PACKET, socket.SOCK_RAW) as s:
        s.bind((iface, 0))
        for _ in range(count):
            s.send(b"\x02" * 6 + b"\x04" * 6 + b"\x88\xb5" + b"w" * 50)


def _arrived(count: int) -> int:
    before = _rx(PORT_B)
    _send(PORT_A, count)
    deadline = time.monotonic() + 1.0
    while _rx(PORT_B) - before < count and time.monotonic() < deadline:
        time.sleep(0.01)
    return _rx(PORT_B) - before


@pytest.fixture
def wire():
    if os.geteuid() != 0:
        pytest.skip("needs root to create veth pairs")
    try:
        ends = wires.make(PORT_A, PORT_B)
        for iface in (*ends, PORT_A, PORT_B):  # no IPv6 neighbour discovery in the counts
            path = Path(f"/proc/sys/net/ipv6/conf/{iface}/disable_ipv6")
            if path.exists():
                path.write_text("1\n")
        for port in (PORT_A, PORT_B):
            subprocess.run(["ip", "link", "set", "dev", port, "up"], check=True)
        yield ends
    finally:
        for port in (PORT_A, PORT_B):  # removing a port removes its wire end
            subprocess.run(["ip", "link", "del", port], capture_output=True)


def test_a_wire_carries_frames_and_its_cut_is_carrier_loss_with_both_ports_up(wire):
    iff_up, iff_lower_up = 0x1, 0x10000
    time.sleep(0.1)
    assert _arrived(20) == 20
    for end in wire:
        subprocess.run(["ip", "link", "set", "dev", end, "down"], check=True)
    time.sleep(0.1)
    for port in (PORT_A, PORT_B):
        flags = _flags(port)
        assert flags & iff_up and not flags & iff_lower_up, hex(flags)
    assert _arrived(5) == 0
    for end in wire:
        subprocess.run(["ip", "link", "set", "dev", end, "up"], check=True)
    time.sleep(0.2)
    assert _arrived(20) == 20


def test_a_wire_that_cannot_be_made_is_a_clear_error(wire):
    with pytest.raises(wires.WireError, match="fbwt-sa-eth1"):
        wires.make(PORT_A, "fbwt-sc-eth1")


def test_a_wire_half_made_is_removed_again(wire):
    # the second port's name is taken (PORT_B): the first pair made must not stay behind
    with pytest.raises(wires.WireError, match="fbwt-sb-eth1"):
        wires.make("fbwt-sd-eth1", PORT_B)
    assert not os.path.exists("/sys/class/net/fbwt-sd-eth1")
    assert not os.path.exists("/sys/class/net/fbwt-sd-w1")
