"""The switch forwarding real frames between two network namespaces over veths.

Needs root and `ip netns`; creates only `dpt-*` namespaces and `dpt*` links and
removes them by name afterwards, even when the test fails.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest
from bmv2json import ethernet_program, frame

from p4switch.runtime_api import ActionCall, MatchKind, MatchParam
from p4switch.switch import Switch

NAMESPACES = {1: ("dpt-a", "dpt0"), 2: ("dpt-b", "dpt1")}
ETHERTYPE = 0x88B5

RECEIVER = r"""
import socket, sys, time
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
s.bind((sys.argv[1], 0))
s.settimeout(0.2)
print("ready", flush=True)
want, deadline = int(sys.argv[2]), time.time() + float(sys.argv[3])
got = 0
while got < want and time.time() < deadline:
    try:
        f = s.recv(65535)
    except socket.timeout:
        continue
    if f[12:14] == b"\x88\xb5":
        got += 1
        print(f.hex(), flush=True)
"""

SENDER = r"""
import socket, sys
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((sys.argv[1], 0))
for h in sys.argv[2:]:
    s.send(bytes.fromhex(h))
"""


def _netns_usable() -> str | None:
    if os.geteuid() != 0:
        return "needs root"
    if subprocess.run(["ip", "netns", "list"], capture_output=True).returncode != 0:
        return "needs ip netns"
    return None


pytestmark = pytest.mark.skipif(_netns_usable() is not None,
                                reason=str(_netns_usable()))


def sh(*cmd: str) -> None:
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: {r.stderr.strip()}")


def quiet_ipv6(*prefix: str, link: str) -> None:
    """Best effort: no IPv6 autoconfiguration chatter on the test links."""
    subprocess.run([*prefix, "sysctl", "-qw", f"net.ipv6.conf.{link}.disable_ipv6=1"],
                   capture_output=True)


def teardown() -> None:
    for ns, link in NAMESPACES.values():
        subprocess.run(["ip", "link", "del", link], capture_output=True)
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


@pytest.fixture
def veths():
    teardown()  # leftovers of an interrupted run
    try:
        for ns, link in NAMESPACES.values():
            sh("ip", "netns", "add", ns)
            sh("ip", "link", "add", link, "type", "veth", "peer", "name", f"{link}h")
            sh("ip", "link", "set", f"{link}h", "netns", ns)
            quiet_ipv6(link=link)
            sh("ip", "link", "set", link, "up")
            quiet_ipv6("ip", "netns", "exec", ns, link=f"{link}h")
            sh("ip", "netns", "exec", ns, "ip", "link", "set", f"{link}h", "up")
        time.sleep(0.2)  # carrier comes up
        yield {port: link for port, (_ns, link) in NAMESPACES.items()}
    finally:
        teardown()


def forwarding_switch(ports: dict[int, str], **kw) -> Switch:
    p = ethernet_program()
    p.table("ingress", "fwd", [("exact", ["standard_metadata", "ingress_port"])],
            ["forward", "drop"], default=("drop", []))
    sw = Switch(ports, **kw)
    sw.load_program(p.build())
    sw.table_add("fwd", [MatchParam(MatchKind.EXACT, 1)], ActionCall("forward", (2,)))
    sw.table_add("fwd", [MatchParam(MatchKind.EXACT, 2)], ActionCall("forward", (1,)))
    return sw


def start_receiver(ns: str, iface: str, count: int, seconds: float) -> subprocess.Popen:
    rx = subprocess.Popen(["ip", "netns", "exec", ns, sys.executable, "-c", RECEIVER, iface,
                           str(count), str(seconds)], stdout=subprocess.PIPE, text=True)
    assert rx.stdout.readline().strip() == "ready"
    return rx


def send(ns: str, iface: str, frames: list[bytes]) -> None:
    subprocess.run(["ip", "netns", "exec", ns, sys.executable, "-c", SENDER, iface,
                    *[f.hex() for f in frames]], check=True)


def test_frames_cross_the_switch_between_namespaces(veths, tmp_path):
    sw = forwarding_switch(veths, pcap_dir=str(tmp_path))
    sw.start()
    try:
        frames = [frame(ether_type=ETHERTYPE, payload=bytes([i]) * 46) for i in range(20)]
        rx = start_receiver("dpt-b", "dpt1h", len(frames), 5)
        send("dpt-a", "dpt0h", frames)
        out, _ = rx.communicate(timeout=10)
        got = [bytes.fromhex(line) for line in out.split()]
        assert got == frames
    finally:
        sw.stop()
    pcap_out = (tmp_path / "dpt1_out.pcap").read_bytes()
    pcap_in = (tmp_path / "dpt0_in.pcap").read_bytes()
    assert pcap_out.count(frames[0]) == 1 and pcap_in.count(frames[-1]) == 1


def test_port_down_is_reported_and_drops_are_counted(veths):
    sw = forwarding_switch(veths)
    events = []
    sw.set_port_status_handler(lambda port, up: events.append((port, up)))
    sw.start()
    try:
        sh("ip", "netns", "exec", "dpt-b", "ip", "link", "set", "dpt1h", "down")
        deadline = time.time() + 2
        while (2, False) not in events and time.time() < deadline:
            time.sleep(0.05)
        assert (2, False) in events
        send("dpt-a", "dpt0h", [frame(ether_type=ETHERTYPE, payload=bytes(46))] * 3)
        deadline = time.time() + 2
        while sw.port_drops(2)["port_down"] < 3 and time.time() < deadline:
            time.sleep(0.05)
        assert sw.port_drops(2)["port_down"] == 3
    finally:
        sw.stop()


def test_egress_rate_spaces_frames_on_the_wire(veths):
    sw = forwarding_switch(veths)
    sw.port_set_params(2, rate_pps=200, queue_depth=100)
    sw.start()
    try:
        frames = [frame(ether_type=ETHERTYPE, payload=bytes([i]) * 46) for i in range(41)]
        rx = start_receiver("dpt-b", "dpt1h", len(frames), 5)
        t0 = time.monotonic()
        send("dpt-a", "dpt0h", frames)
        out, _ = rx.communicate(timeout=10)
        elapsed = time.monotonic() - t0
        assert len(out.split()) == 41
        assert 0.18 < elapsed < 1.5  # 40 gaps of 5 ms; generous for process start-up
        assert sw.tm_drops(2) == 0
    finally:
        sw.stop()


def test_packet_held_by_recirculation_costs_little_cpu_and_leaves_when_released(veths):
    from bmv2json import assign, expr, field, hexstr, prim

    p = ethernet_program().register("gate", 1, 8).scalar("open", 8)
    reg = {"type": "register_array", "value": "gate"}
    p.action("read_gate", [], [prim("register_read", field("scalars", "open"), reg, hexstr(0)),
                               assign(field("standard_metadata", "egress_spec"), hexstr(2))])
    p.action("hold", [], [prim("recirculate", hexstr(0))])
    p.run("ingress", "read_gate")
    p.conditional("egress", "closed", expr("==", field("scalars", "open"), hexstr(0)),
                  "tbl_hold", None)
    p.table("egress", "tbl_hold", [], ["hold"], default=("hold", []))
    sw = Switch(veths)
    sw.load_program(p.build())
    sw.start()
    try:
        rx = start_receiver("dpt-b", "dpt1h", 1, 6)
        send("dpt-a", "dpt0h", [frame(ether_type=ETHERTYPE, payload=bytes(46))])
        time.sleep(0.3)
        c0, t0 = time.process_time(), time.monotonic()
        time.sleep(1.0)
        cpu_share = (time.process_time() - c0) / (time.monotonic() - t0)
        assert cpu_share < 0.2
        sw.register_write("gate", 0, 1)
        out, _ = rx.communicate(timeout=10)
        assert len(out.split()) == 1
    finally:
        sw.stop()
