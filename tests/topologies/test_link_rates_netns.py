"""tc on a bmv2 link (topologies/link_rates.py) on a real interface: which class each
fabric frame takes. Flow-control updates and notifications must never wait behind the
data backlog; credit requests must (their FCTBS is trusted only in order with the data).
Root: it makes a veth pair."""

from __future__ import annotations

import dataclasses
import errno
import os
import re
import socket
import subprocess
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from topologies import link_rates
from topologies.ledger import Ledger
from traffic.frames import CREDIT_CODEC, ETHERTYPE_FABRIC, CreditOp, Kind

pytestmark = pytest.mark.mininet


def _lrh_frame(kind: Kind) -> bytes:
    """A fabric frame of this LRH kind, 60 bytes: Ethernet, then LRH byte 0 (vl/sl)
    and byte 1 (kind), the rest zero."""
    eth = b"\xff" * 6 + bytes.fromhex("020000000009") + ETHERTYPE_FABRIC.to_bytes(2, "big")
    return (eth + bytes([0, int(kind)])).ljust(60, b"\0")


def _credit_frame(op: CreditOp) -> bytes:
    frame = CREDIT_CODEC.pack_values(0xFFFFFFFFFFFF, 0x020000000009, ETHERTYPE_FABRIC, 0, 0,
                                     Kind.CREDIT, 0, 0, 4, int(op), 123, 0, 456)
    return frame.ljust(60, b"\0")


@contextmanager
def _shaped_link(tmp_path, name: str, rate: link_rates.PortRate):
    """A veth pair whose first end (`rate.iface`, a switch port) carries the run's tc
    shaping; yields that end and removes the pair by the ledger afterwards."""
    if os.geteuid() != 0:
        pytest.skip("needs root (veth pair, tc)")
    ledger = Ledger.create(name, tmp_path)
    a = f"{ledger.prefix}s1-eth{rate.port}"
    b = f"{ledger.prefix}s2-eth{rate.port}"
    ledger.add_interfaces([a, b])
    try:
        subprocess.run(["ip", "link", "add", a, "type", "veth", "peer", "name", b], check=True)
        for iface in (a, b):  # quiet: no IPv6 neighbour discovery in the counts
            Path(f"/proc/sys/net/ipv6/conf/{iface}/disable_ipv6").write_text("1\n")
            subprocess.run(["ip", "link", "set", iface, "up"], check=True)
        for cmd in link_rates.tc_commands(dataclasses.replace(rate, iface=a)):
            subprocess.run(cmd, check=True, capture_output=True)
        yield a
    finally:
        left = Ledger.load(ledger.path).teardown()
    assert left == []


def _sent_per_class(iface: str) -> dict[str, int]:
    out = subprocess.run(["tc", "-s", "class", "show", "dev", iface], capture_output=True,
                         text=True, check=True).stdout
    return {m.group(1): int(m.group(2)) for m in
            re.finditer(r"class htb (1:\d+) .*?\n\s*Sent \d+ bytes (\d+) pkt", out)}


def test_credit_updates_and_notifications_skip_the_data_class_and_requests_do_not(tmp_path):
    with _shaped_link(tmp_path, "tc-classes", link_rates.PortRate(2, "", 300, 64)) as a:
        with socket.socket(socket.AF_PACKET, socket.SOCK_RAW) as sock:
            sock.bind((a, 0))
            for frame in (_credit_frame(CreditOp.NORMAL), _lrh_frame(Kind.NOTIFY),
                          _credit_frame(CreditOp.REQUEST), _lrh_frame(Kind.DATA),
                          _lrh_frame(Kind.DATA)):
                sock.send(frame)
        deadline = time.monotonic() + 2
        while time.monotonic() < deadline:
            sent = _sent_per_class(a)
            if sent.get("1:1", 0) + sent.get("1:2", 0) >= 5:
                break
            time.sleep(0.05)
        assert sent.get("1:1") == 2, sent  # the update and the notification
        assert sent.get("1:2") == 3, sent  # the request among the two data frames


def test_frames_the_shaping_qdisc_drops_are_counted(tmp_path):
    # A run counts them as `link_shaping` drops at the switch port (fabriclab/runner.py):
    # no P4 counter sees a frame dropped after the pipeline.
    with _shaped_link(tmp_path, "tc-drops", link_rates.PortRate(3, "", 10, 4)) as a:
        assert link_rates.qdisc_drops(a) == 0
        refused = 0
        with socket.socket(socket.AF_PACKET, socket.SOCK_RAW) as sock:
            sock.bind((a, 0))
            for _ in range(20):  # 10 frames/s, a queue of 4: most of a burst of 20 drop
                try:
                    sock.send(_lrh_frame(Kind.DATA))
                except OSError as exc:  # ENOBUFS: the qdisc dropped it
                    assert exc.errno == errno.ENOBUFS
                    refused += 1
        assert refused >= 20 - 4 - 2  # at most a frame or two leave at once
        assert link_rates.qdisc_drops(a) == refused
