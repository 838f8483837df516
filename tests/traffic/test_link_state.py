"""Link faults set switch ports down over rtnetlink (traffic/link_state.py): both ends
in one go, no `ip` process to wait for, and each failure named. The veth tests need
root: they make `lst-a0`/`lst-b0` and delete them by name."""

from __future__ import annotations

import socket
import struct
import time

import pytest

from tests.veths import veth_pairs
from traffic import link_state
from traffic.faults import FaultError, LinkDown, LinkEnd, LinkUp

pytestmark = pytest.mark.timing  # asserts on elapsed time (conftest: the serial part)


def test_the_request_sets_only_the_up_flag_of_one_interface():
    msg = link_state.request(index=7, up=False, seq=3)
    length, kind, flags, seq, _pid = struct.unpack_from("=IHHII", msg)
    family, _type, index, ifi_flags, change = struct.unpack_from("=BxHiII", msg, 16)
    assert (length, kind, seq, index) == (len(msg), link_state.RTM_NEWLINK, 3, 7)
    assert flags == link_state.NLM_F_REQUEST | link_state.NLM_F_ACK
    assert (family, ifi_flags, change) == (socket.AF_UNSPEC, 0, link_state.IFF_UP)
    assert struct.unpack_from("=BxHiII", link_state.request(7, True, 1), 16)[3] == 1


def test_answers_are_read_per_request():
    def error(seq: int, err: int) -> bytes:
        return struct.pack("=IHHII", 36, link_state.NLMSG_ERROR, 0, seq, 0) + \
            struct.pack("=i", err) + bytes(16)
    assert link_state.acks(error(1, 0) + error(2, -19)) == {1: 0, 2: 19}


@pytest.fixture
def veth():
    with veth_pairs(("lst-a0", "lst-b0"), up=False):
        yield "lst-a0", "lst-b0"


def _flags(name: str) -> int:
    return int(open(f"/sys/class/net/{name}/flags").read(), 16)


def test_both_ends_go_down_and_up_again_without_an_ip_process(veth):
    a, b = veth
    ends = [LinkEnd(a), LinkEnd(b)]
    LinkUp(ends)()
    assert all(_flags(n) & link_state.IFF_UP for n in veth)
    started = time.monotonic()
    LinkDown(ends)()
    took = time.monotonic() - started
    assert not any(_flags(n) & link_state.IFF_UP for n in veth)
    assert took < 0.05, f"setting two ends down took {took * 1e3:.1f} ms"
    LinkUp(ends)()
    assert all(_flags(n) & link_state.IFF_UP for n in veth)


def test_a_missing_interface_is_named_and_the_other_end_still_goes_down(veth):
    a, _b = veth
    LinkUp([LinkEnd(a)])()
    with pytest.raises(FaultError, match="lst-none0: no such interface"):
        LinkDown([LinkEnd("lst-none0"), LinkEnd(a)])()
    assert not _flags(a) & link_state.IFF_UP
