"""The agents' netlink socket filter (controller/netlink_filter.py): the kernel wakes
an agent only for its own interfaces' link messages, and a watched interface that is
deleted and made again is still watched. The program is checked by a small classic
BPF interpreter; the veth tests (root) check it in the kernel."""

from __future__ import annotations

import select
import socket
import struct
import time

import pytest

from controller import netlink_filter
from controller.agent import RTM_DELLINK, RTM_NEWLINK, CarrierWatcher
from tests.veths import ip, veth_pairs

NEWADDR = 20  # RTM_NEWADDR: another kind of message on a routing socket


def run_filter(insns: list[tuple], data: bytes) -> int:
    """What the filter returns for one message (the subset of classic BPF it uses)."""
    acc, pc = 0, 0
    while True:
        code, jt, jf, k = insns[pc]
        if code == netlink_filter.LD_H_ABS:
            acc = int.from_bytes(data[k:k + 2], "big")
        elif code == netlink_filter.LD_W_ABS:
            acc = int.from_bytes(data[k:k + 4], "big")
        elif code == netlink_filter.JEQ_K:
            pc += jt if acc == k else jf
        elif code == netlink_filter.RET_K:
            return k
        else:
            raise AssertionError(f"unexpected opcode {code:#x}")
        pc += 1


def link_message(kind: int, index: int) -> bytes:
    body = struct.pack("=BxHiII", 0, 1, index, 0x10043, 0)
    return struct.pack("=IHHII", 16 + len(body), kind, 0, 0, 0) + body


@pytest.mark.parametrize("indexes", [[7], [3, 9, 41], list(range(1, 201))])
def test_only_link_messages_of_the_given_interfaces_pass(indexes):
    insns = netlink_filter.program(indexes)
    for index in (1, 3, 7, 9, 40, 41, 200, 201, 70000):
        for kind in (RTM_NEWLINK, RTM_DELLINK, NEWADDR):
            verdict = run_filter(insns, link_message(kind, index))
            wanted = index in indexes and kind != NEWADDR
            assert (verdict != 0) == wanted, (index, kind)


def test_no_interfaces_or_too_many_is_refused_so_the_watcher_reads_everything():
    with pytest.raises(ValueError):
        netlink_filter.program([])
    with pytest.raises(ValueError):
        netlink_filter.program(range(1, netlink_filter.MAX_INDEXES + 2))


@pytest.fixture
def two_veths():
    with veth_pairs(("nlf-a0", "nlf-b0"), ("nlf-a1", "nlf-b1")):
        yield "nlf-a0", "nlf-a1"


def _wait_carrier(name: str, up: bool) -> None:
    deadline = time.monotonic() + 5
    while open(f"/sys/class/net/{name}/carrier").read().strip() != str(int(up)):
        assert time.monotonic() < deadline, f"{name} carrier never became {up}"
        time.sleep(0.02)


def _events(watcher: CarrierWatcher, wait_s: float = 0.5) -> list[tuple[str, bool]]:
    out, deadline = [], time.monotonic() + wait_s
    while time.monotonic() < deadline:
        out += [(e.ifname, e.up) for e in watcher.events(timeout=0.05)]
    return out


def test_the_kernel_drops_other_interfaces_messages_before_the_agent_wakes(two_veths):
    mine, other = two_veths
    _wait_carrier(mine, True)
    watcher = CarrierWatcher([mine])
    try:
        assert watcher.filtered
        ip("link", "set", other, "down")
        ready, _, _ = select.select([watcher.sock], [], [], 0.3)
        assert not ready, "a message about another interface woke the watcher"
        ip("link", "set", "nlf-b0", "down")
        assert _events(watcher) == [(mine, False)]
    finally:
        watcher.close()


def test_a_watched_interface_deleted_and_made_again_is_still_watched(two_veths):
    mine, _other = two_veths
    _wait_carrier(mine, True)
    watcher = CarrierWatcher([mine])
    try:
        old_index = socket.if_nametoindex(mine)
        ip("link", "del", mine)
        assert _events(watcher) == [(mine, False)]
        assert not watcher.filtered
        ip("link", "add", mine, "type", "veth", "peer", "name", "nlf-b0")
        ip("link", "set", mine, "up")
        ip("link", "set", "nlf-b0", "up")
        _wait_carrier(mine, True)
        assert (mine, True) in _events(watcher)
        assert watcher.filtered and socket.if_nametoindex(mine) != old_index
        ip("link", "set", "nlf-b0", "down")
        assert _events(watcher) == [(mine, False)]
    finally:
        watcher.close()
