"""A bmv2 switch's hold loop (topologies/hold_loop.py): named like the switch's other
interfaces, either relayed in ticket order (topologies/hold_relay.py) or a direct pair
paced by tc htb into a queue that does not drop, recorded in the run's ledger and
removed by name at teardown (root: it makes real veth pairs)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from topologies import hold_loop
from topologies.ledger import Ledger
from topologies.link_rates import COST_BYTES


def test_the_loop_is_named_like_the_switch_ports_and_paced_in_frames():
    loop = hold_loop.plan("fk3-", "s12", 508, 509, relay=False)
    assert (loop.out_iface, loop.in_iface) == ("fk3-s12-eth508", "fk3-s12-eth509")
    assert loop.ports == {508: "fk3-s12-eth508", 509: "fk3-s12-eth509"}
    cmds = [" ".join(c) for c in hold_loop.tc_commands(loop)]
    bits = hold_loop.PACE_PPS * COST_BYTES * 8
    assert any(f"rate {bits}bit ceil {bits}bit" in c and f"mpu {COST_BYTES}" in c
               for c in cmds)
    assert any(f"pfifo limit {hold_loop.LIMIT_PKTS}" in c for c in cmds)
    assert all("dev fk3-s12-eth508" in c for c in cmds)  # paced on the out end only


def test_a_name_too_long_or_a_pace_that_is_not_positive_is_refused():
    with pytest.raises(hold_loop.HoldLoopError, match="15"):
        hold_loop.plan("fk3-", "switch1234", 508, 509)
    with pytest.raises(hold_loop.HoldLoopError, match="not positive"):
        hold_loop.plan("fk3-", "s1", 508, 509, pace_pps=0)


@pytest.mark.mininet
def test_a_loop_is_made_paced_and_removed_by_name_from_the_ledger(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("needs root (veth pairs, tc)")
    ledger = Ledger.create("hold-loop-test", tmp_path)
    loop = hold_loop.plan(ledger.prefix, "s1", 508, 509, pace_pps=200, relay=False)
    ledger.add_interfaces(loop.interfaces)  # recorded before they exist
    try:
        hold_loop.create(loop)
        for iface in loop.interfaces:
            assert Path("/sys/class/net", iface).exists()
            assert Path(f"/sys/class/net/{iface}/mtu").read_text().strip() == "9000"
        qdiscs = subprocess.run(["tc", "qdisc", "show", "dev", loop.out_iface],
                                capture_output=True, text=True, check=True).stdout
        assert "htb" in qdiscs and f"limit {hold_loop.LIMIT_PKTS}" in qdiscs
        stats = hold_loop.stats(loop)
        assert stats["qdisc_drops"] == 0 and stats["frames_out"] is not None
        hold_loop.create(loop)  # a restarted switch: the loop is kept as it is
    finally:
        left = Ledger.load(ledger.path).teardown()
    assert left == []
    assert not any(Path("/sys/class/net", i).exists() for i in loop.interfaces)


@pytest.mark.mininet
def test_find_uses_a_wired_paced_loop_and_names_what_is_missing_otherwise(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("needs root (veth pairs, tc)")
    ledger = Ledger.create("hold-loop-find-test", tmp_path)
    loop = hold_loop.plan(ledger.prefix, "s1", 508, 509, relay=False)
    ledger.add_interfaces(loop.interfaces)
    try:
        hold_loop.create(loop)
        found = hold_loop.find(["s1", "s2"], ledger.prefix, (508, 509))
        assert found.loops == {"s1": loop}
        assert found.without["s2"].startswith(f"no interface {ledger.prefix}s2-eth508")
        subprocess.run(["tc", "qdisc", "del", "dev", loop.out_iface, "root"], check=True)
        unpaced = hold_loop.find(["s1"], ledger.prefix, (508, 509))
        assert unpaced.without == {"s1": f"{loop.out_iface} is not paced (no tc htb on it)"}
    finally:
        left = Ledger.load(ledger.path).teardown()
    assert left == []


@pytest.mark.mininet
def test_a_relayed_loop_gives_frames_back_in_ticket_order_and_goes_with_its_ledger(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("needs root (veth pairs, packet sockets)")
    from tests.topologies.test_hold_relay import frame, ticket_of

    ledger = Ledger.create("hold-relay-test", tmp_path)
    loop = hold_loop.plan(ledger.prefix, "s1", 508, 509, pace_pps=1000)
    assert loop.relayed and loop.relay_rx == f"{ledger.prefix}s1-hr508"
    ledger.add_interfaces(loop.interfaces)
    stats = tmp_path / "relay.json"
    try:
        hold_loop.create(loop)
        assert hold_loop.wiring_problem(loop) is None
        found = hold_loop.find(["s1"], ledger.prefix, (508, 509)).loops["s1"]
        assert found.relayed and found.interfaces == loop.interfaces  # (its pace is the relay's)
        relay = subprocess.Popen(loop.relay_command(sys.executable, stats),
                                 cwd=Path(__file__).resolve().parents[2])
        ledger.add_process(relay.pid, "hold relay s1")
        # the switch's side: frames out of port 508, back in on port 509
        out = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
        out.bind((loop.out_iface, 0))
        back = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
        back.bind((loop.in_iface, 3))
        back.settimeout(5)
        time.sleep(0.5)  # the relay's sockets are open
        for t in (5, 4, 3, 2, 1):
            out.send(frame(t))
        got = []
        while len(got) < 5:
            data, addr = back.recvfrom(65536)
            if addr[2] != 4:  # not our own outgoing
                got.append(ticket_of(data))
        # the first may go before the others arrived; the rest come back sorted
        assert sorted(got) == [1, 2, 3, 4, 5] and got[1:] == sorted(got[1:]), got
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline and not stats.exists():
            time.sleep(0.1)
        time.sleep(0.6)
        counts = json.loads(stats.read_text())
        assert counts["frames_in"] == counts["frames_out"] == 5 and counts["not_held"] == 0
        assert hold_loop.stats(loop, stats)["relay"]["frames_out"] == 5
    finally:
        left = Ledger.load(ledger.path).teardown()
    assert left == []
    assert relay.wait(timeout=5) is not None  # stopped by PID from the ledger
    assert not any(Path("/sys/class/net", i).exists() for i in loop.interfaces)
