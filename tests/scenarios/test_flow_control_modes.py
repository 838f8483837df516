"""Incast 3 -> 1 in each flow-control mode, in Mininet, asserted on the captured pcaps.

LOSSY loses and every loss is explained by a switch counter; PFC with enough
headroom and CREDIT lose nothing; pause frames on the wire are valid 802.1Qbb
frames (PFC) and none appear in CREDIT mode, where credit frames do.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from scapy.contrib.mac_control import MACControlClassBasedFlowControl
from scapy.layers.l2 import Ether

from fabriclab import scenario as sc
from tests.scenarios.result_contract import assert_complete_result, assert_no_leftovers
from tests.scenarios.shared_runs import incast_at_scenario_size
from topologies.targets import TargetError, resolve
from traffic.frames import ETHERTYPE_FABRIC, ETHERTYPE_MAC_CONTROL, LRH_KIND_OFFSET, Kind
from traffic.pcap import read_frames

pytestmark = [pytest.mark.mininet, pytest.mark.slow]


def _frames(run_dir: Path) -> list[bytes]:
    frames = []
    for pcap in sorted((run_dir / "pcaps").glob("*.pcap")):
        frames += [f for _ts, f in read_frames(pcap)]
    return frames


def _ethertype(frame: bytes) -> int:
    return int.from_bytes(frame[12:14], "big")


# The embedded switch at the scenario's rate and size (conftest.incast_run: the same runs
# are the first of test_reproducibility.py's pairs, and the credit one is the shipped
# scenario as it is, so its result contract is checked here). Real bmv2 runs the same
# incast at a rate it keeps up with, with what must and may differ, in
# test_bmv2_scenarios.py.
@pytest.fixture
def runs(incast_run):
    try:
        resolve("embedded")
    except TargetError as exc:
        pytest.skip(str(exc))
    return {mode: _checked(incast_run(mode)) for mode in ("lossy", "pfc", "credit")}


def _checked(shared):
    result = shared.result
    assert result.metrics.error is None, result.metrics.error
    assert shared.left_behind == set(), "the run removed every interface it created"
    return result


def test_the_incast_run_as_shipped_leaves_a_complete_result(runs):
    result = runs["credit"]
    scenario = sc.load("incast")
    assert incast_at_scenario_size("credit") == scenario, "credit is the scenario's own mode"
    assert_complete_result(result.run_dir, scenario)
    assert result.metrics.verdict in ("pass", "incomplete", "stalled")
    assert_no_leftovers(result.metrics.run_prefix)


def test_lossy_incast_loses_and_every_loss_is_counted_by_a_switch(runs):
    m = runs["lossy"].metrics
    assert m.lost > 0
    assert m.unexplained_loss == 0
    assert m.drops_by_reason.get("tail") == m.lost


@pytest.mark.parametrize("mode", ["pfc", "credit"])
def test_lossless_incast_loses_nothing_and_completes(runs, mode):
    m = runs[mode].metrics
    assert (m.sent, m.lost, m.reordered, m.duplicates) == (m.received, 0, 0, 0)
    assert m.cct_ms is not None and m.verdict == "pass"


def test_pfc_pauses_on_the_wire_are_valid_8021qbb_frames(runs):
    pauses = [f for f in _frames(runs["pfc"].run_dir) if _ethertype(f) == ETHERTYPE_MAC_CONTROL]
    assert pauses, "the congested switch paused its upstream hosts"
    for frame in pauses:
        pkt = Ether(frame)
        assert pkt.dst == "01:80:c2:00:00:01"
        layer = pkt[MACControlClassBasedFlowControl]
        assert layer._op_code == 0x0101
        assert layer.c0_enabled == 1, "priority 0 (SL 0) is the one paused"


def test_credit_mode_sends_credits_and_never_a_pause(runs):
    frames = _frames(runs["credit"].run_dir)
    assert not [f for f in frames if _ethertype(f) == ETHERTYPE_MAC_CONTROL]
    credits = [f for f in frames if _ethertype(f) == ETHERTYPE_FABRIC and f[LRH_KIND_OFFSET] == Kind.CREDIT]
    assert credits, "receivers returned credits"
