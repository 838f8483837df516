"""Held frames under real timing: the embedded switch's data-plane thread runs
fabric.p4 on veth pairs, the test plays the neighbours on the other ends.

Needs root; creates only `fbs<port>`/`fbh<port>` veth pairs in the current
namespace and removes them by name afterwards, even when a test fails.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time

import pytest
from fabric_harness import FC_CREDIT, FC_PFC, FcConfig, credit_frame, data_frame, psn_of

from controller.readout import BLOCKED_QUANTUM_NS
from traffic.frames import pfc_frame

PORTS = (1, 2)
ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4
DROP_REASONS = 8
DROP_NO_ROUTE, DROP_HOQ_LIFETIME, DROP_WATCHDOG, DROP_LINK_DOWN = 0, 4, 5, 6

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to create veth pairs")


def wait_for(value, expected, seconds: float = 1.0):
    """value() once it equals `expected`, or its last value after `seconds`."""
    deadline = time.monotonic() + seconds
    while True:
        got = value()
        if got == expected or time.monotonic() > deadline:
            return got
        time.sleep(0.01)


def _sh(*cmd: str) -> None:
    subprocess.run(cmd, check=True, capture_output=True)


def _remove_links() -> None:
    for port in PORTS:
        subprocess.run(["ip", "link", "del", f"fbs{port}"], capture_output=True)


class Neighbour:
    """The far end of one switch port: sends frames, collects what the switch sends."""

    def __init__(self, iface: str):
        # Protocol 0 until bound: a socket opened for ETH_P_ALL would also queue
        # frames from every other interface (other tests' traffic) until bind().
        self.sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
        self.sock.bind((iface, ETH_P_ALL))
        self.sock.settimeout(0.02)

    def send(self, frame) -> None:
        self.sock.send(bytes(frame))

    def receive(self, seconds: float) -> list[bytes]:
        frames, deadline = [], time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                frame, addr = self.sock.recvfrom(65535)
            except TimeoutError:
                continue
            if addr[2] != PACKET_OUTGOING:
                frames.append(frame)
        return frames

    def data_psns(self, seconds: float) -> list[int]:
        return [psn_of(f) for f in self.receive(seconds) if f[12:14] == b"\x88\xb5"
                and f[15] == 1]

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def live(compiled):
    """A started switch on ports 1 and 2 (dlid 5 -> port 2, 10 Mb/s pause quanta) and
    its two neighbours."""
    from fabric_harness import Fabric

    _remove_links()
    fabric = neighbours = None
    try:
        for port in PORTS:
            _sh("ip", "link", "add", f"fbs{port}", "type", "veth", "peer", "name", f"fbh{port}")
            for end in (f"fbs{port}", f"fbh{port}"):
                subprocess.run(["sysctl", "-qw", f"net.ipv6.conf.{end}.disable_ipv6=1"],
                               capture_output=True)
                _sh("ip", "link", "set", end, "up")
        fabric = Fabric(compiled[0], ports={port: f"fbs{port}" for port in PORTS})
        fabric.route(5, 2)
        for port in PORTS:
            fabric.pause_quantum(port, 51200)  # 10 Mb/s: a full pause lasts 3.4 s
        neighbours = {port: Neighbour(f"fbh{port}") for port in PORTS}
        fabric.sw.start()
        time.sleep(0.2)  # carrier seen up
        yield fabric, neighbours
    finally:
        if fabric is not None:
            fabric.sw.stop()
        for n in (neighbours or {}).values():
            n.close()
        _remove_links()


def test_pfc_holds_a_paused_priority_and_releases_it_in_order_on_resume(live):
    fabric, nb = live
    fabric.set_mode(FcConfig(mode=FC_PFC, xoff=100, xon=1, headroom=100))
    nb[2].send(pfc_frame(1, [0xFFFF] + [0] * 7))
    time.sleep(0.05)
    for psn in range(1, 6):
        nb[1].send(data_frame(5, psn=psn))
    assert nb[2].data_psns(0.3) == []
    nb[2].send(pfc_frame(1, [0] * 8))
    assert nb[2].data_psns(0.3) == [1, 2, 3, 4, 5]
    blocked = fabric.register("blocked_ns", 2 * 8 + 0)
    assert blocked >= 200_000_000
    # its counter form (what bmv2's P4Runtime reads): whole quanta, at most two behind
    quanta = fabric.counter("blocked_quanta", 2 * 8 + 0)[1]
    assert 0 <= blocked - quanta * BLOCKED_QUANTUM_NS < 2 * BLOCKED_QUANTUM_NS, (blocked, quanta)


def test_a_pause_expires_after_its_quanta(live):
    fabric, nb = live
    fabric.set_mode(FcConfig(mode=FC_PFC, xoff=100, xon=1, headroom=100))
    nb[2].send(pfc_frame(1, [2000] + [0] * 7))  # 2000 quanta = 102.4 ms
    time.sleep(0.02)
    for psn in range(1, 4):
        nb[1].send(data_frame(5, psn=psn))
    assert nb[2].data_psns(0.05) == []
    assert nb[2].data_psns(0.3) == [1, 2, 3]


def test_credit_mode_holds_without_credit_and_releases_in_fifo_order(live):
    fabric, nb = live
    fabric.set_mode(FcConfig(mode=FC_CREDIT, credit_limit=4, credit_coalesce=1))
    for psn in range(1, 9):
        nb[1].send(data_frame(5, psn=psn))
    assert nb[2].data_psns(0.2) == [1, 2, 3, 4]  # the credit the neighbour starts with
    nb[2].send(credit_frame(vl=0, fccl=6))  # two more blocks
    assert nb[2].data_psns(0.2) == [5, 6]
    nb[2].send(credit_frame(vl=0, fccl=8))
    assert nb[2].data_psns(0.2) == [7, 8]
    assert fabric.register("fc_fctbs", 2 * 8 + 0) == 8
    assert fabric.counter("FabricIngress.drop_counter", 1 * DROP_REASONS + 3)[1] == 0


def test_hoq_lifetime_discards_held_frames_and_counts_them(live):
    fabric, nb = live
    fabric.set_mode(FcConfig(mode=FC_CREDIT, credit_limit=3, credit_coalesce=1,
                             hoq_lifetime_us=20_000))
    for psn in range(1, 6):
        nb[1].send(data_frame(5, psn=psn))
    assert nb[2].data_psns(0.2) == [1, 2, 3]
    hoq_drops = wait_for(lambda: fabric.counter(
        "FabricIngress.drop_counter", 1 * DROP_REASONS + DROP_HOQ_LIFETIME)[1], 2)
    assert hoq_drops == 2
    assert fabric.register("fc_buffer", 1 * 8 + 0) == 0  # discarded frames free the buffer


def test_frames_held_for_a_port_whose_link_went_down_are_discarded_and_counted(live):
    fabric, nb = live
    fabric.set_mode(FcConfig(mode=FC_CREDIT, credit_limit=3, credit_coalesce=1))
    for psn in range(1, 6):
        nb[1].send(data_frame(5, psn=psn))
    assert nb[2].data_psns(0.2) == [1, 2, 3]  # two held: no credit
    fabric.ports_down(2)  # what the local agent writes
    link_down = wait_for(lambda: fabric.counter(
        "FabricIngress.drop_counter", 1 * DROP_REASONS + DROP_LINK_DOWN)[1], 2)
    assert link_down == 2
    assert fabric.register("fc_buffer", 1 * 8 + 0) == 0  # the ingress buffer is free again
    assert nb[2].data_psns(0.1) == []


def test_frames_held_for_a_port_notified_dead_for_their_dlid_are_discarded(live):
    from fabric_harness import notify_frame

    fabric, nb = live
    fabric.set_mode(FcConfig(mode=FC_CREDIT, credit_limit=3, credit_coalesce=1))
    fabric.notify((1, 2), epoch=1)
    for psn in range(1, 6):
        nb[1].send(data_frame(5, psn=psn))
    assert nb[2].data_psns(0.2) == [1, 2, 3]  # two held: no credit
    nb[2].send(notify_frame(5, epoch=1))  # the neighbour cannot reach dlid 5 any more
    time.sleep(0.05)
    nb[1].send(data_frame(5, psn=6))  # no route left: dropped, and its sender notified
    no_route = wait_for(lambda: fabric.counter(
        "FabricIngress.drop_counter", 1 * DROP_REASONS + DROP_NO_ROUTE)[1], 3)
    assert no_route == 3  # the two held, and psn 6
    assert fabric.register("fc_buffer", 1 * 8 + 0) == 0  # the ingress buffer is free again
    assert any(f[12:14] == b"\x88\xb5" and f[15] == 6 for f in nb[1].receive(0.2))


def test_pfc_watchdog_stops_honouring_a_pause_storm(live):
    fabric, nb = live
    fabric.set_mode(FcConfig(mode=FC_PFC, xoff=100, xon=1, headroom=100,
                             watchdog_detect_us=20_000, watchdog_restore_us=300_000))
    nb[2].send(pfc_frame(1, [0xFFFF] + [0] * 7))
    time.sleep(0.02)
    for psn in range(1, 4):
        nb[1].send(data_frame(5, psn=psn))
    assert nb[2].data_psns(0.2) == []
    drops = wait_for(lambda: fabric.counter(
        "FabricIngress.drop_counter", 1 * DROP_REASONS + DROP_WATCHDOG)[1], 3)
    assert drops == 3
    nb[1].send(data_frame(5, psn=4))  # while the watchdog acts, new frames drop too
    assert nb[2].data_psns(0.1) == []
    drops = wait_for(lambda: fabric.counter(
        "FabricIngress.drop_counter", 1 * DROP_REASONS + DROP_WATCHDOG)[1], 4)
    assert drops == 4
    assert fabric.register("fc_buffer", 1 * 8 + 0) == 0


def test_pfc_pauses_the_upstream_at_xoff_and_resumes_it_at_xon(live):
    from scapy.contrib.mac_control import MACControlClassBasedFlowControl
    from scapy.layers.l2 import Ether

    def pauses(frames):
        return [Ether(f)[MACControlClassBasedFlowControl].c0_pause_time
                for f in frames if f[12:14] == b"\x88\x08"]

    fabric, nb = live
    fabric.set_mode(FcConfig(mode=FC_PFC, xoff=3, xon=1, headroom=4))
    nb[2].send(pfc_frame(1, [0xFFFF] + [0] * 7))  # downstream stalls
    time.sleep(0.02)
    for psn in range(1, 5):
        nb[1].send(data_frame(5, psn=psn))
    assert pauses(nb[1].receive(0.2)) == [0xFFFF]  # XOFF crossed once
    nb[2].send(pfc_frame(1, [0] * 8))  # downstream drains
    assert nb[2].data_psns(0.2) == [1, 2, 3, 4]
    assert pauses(nb[1].receive(0.1)) == [0]  # resume at XON
    assert fabric.counter("pause_tx", 1 * 8 + 0)[1] == 2
    assert fabric.register("buffer_peak", 1 * 8 + 0) == 4


def test_a_lost_credit_frame_does_not_stall_the_link(live):
    """The neighbour's CREDIT frames are all lost: the blocked switch keeps asking
    (CREDIT op 1 with its FCTBS) and the neighbour's answer releases the queue."""
    from scapy.layers.l2 import Ether

    from traffic.frames import CREDIT

    fabric, nb = live
    fabric.set_mode(FcConfig(mode=FC_CREDIT, credit_limit=2, credit_coalesce=1))
    for psn in range(1, 5):
        nb[1].send(data_frame(5, psn=psn))
    frames = nb[2].receive(0.2)
    assert [psn_of(f) for f in frames if f[15] == 1] == [1, 2]
    requests = [Ether(f)[CREDIT] for f in frames if f[12:14] == b"\x88\xb5" and f[15] == 2]
    assert requests and all(r.op == 1 and r.fctbs == 2 for r in requests)
    nb[2].send(credit_frame(vl=0, fccl=2 + 2))  # answer: ABR = FCTBS 2, 2 blocks free
    assert nb[2].data_psns(0.2) == [3, 4]
