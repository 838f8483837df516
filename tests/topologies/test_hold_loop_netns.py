"""A bmv2 switch's hold loop (topologies/hold_loop.py): named like the switch's other
interfaces, paced by tc htb into a queue that does not drop, recorded in the run's
ledger and removed by name at teardown (root: it makes a real veth pair)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from topologies import hold_loop
from topologies.ledger import Ledger
from topologies.link_rates import COST_BYTES


def test_the_loop_is_named_like_the_switch_ports_and_paced_in_frames():
    loop = hold_loop.plan("fk3-", "s12", 508, 509)
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
    loop = hold_loop.plan(ledger.prefix, "s1", 508, 509, pace_pps=200)
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
    loop = hold_loop.plan(ledger.prefix, "s1", 508, 509)
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
