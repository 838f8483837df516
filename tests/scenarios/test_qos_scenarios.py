"""Partitions and QoS in Mininet on the embedded switch, asserted on captures and counters.

partition-isolation: job A's host sends into job B's partition; not one of those
frames reaches job B's hosts (their captures), every one is dropped and counted
by a switch under its own reason (`pkey`), and job B's AllReduce keeps its solo
throughput. checkpoint-vs-allreduce: with weights in favour of gradient sync the
AllReduce keeps at least 80% of its solo throughput while the checkpoint class
still moves; with equal weights it does not: the contrast is the finding.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fabriclab import scenario as sc
from fabriclab.qos_traffic import BACKGROUND_FLOW_BASE
from fabriclab.runner import run
from tests.scenarios.result_contract import assert_complete_result, assert_no_leftovers
from topologies.targets import TargetError, resolve
from traffic.frames import DATA_CODEC, ETHERTYPE_FABRIC, LRH_KIND_OFFSET, Kind
from traffic.pcap import read_frames

pytestmark = [pytest.mark.mininet, pytest.mark.slow]

_FLOW = DATA_CODEC.fields.index("flow_id")


def _target():
    try:
        return resolve("embedded")
    except TargetError as exc:
        pytest.skip(str(exc))


def _data_flows(pcap: Path) -> list[int]:
    """Flow ids of the DATA frames a host's capture holds."""
    return [DATA_CODEC.unpack(f)[_FLOW] for _ts, f in read_frames(pcap)
            if len(f) >= DATA_CODEC.size and f[12:14] == ETHERTYPE_FABRIC.to_bytes(2, "big")
            and f[LRH_KIND_OFFSET] == Kind.DATA]


@pytest.fixture(scope="module")
def isolation(tmp_path_factory):
    scenario = sc.load("partition-isolation")
    result = run(scenario, _target(), tmp_path_factory.mktemp("parts"))
    assert result.metrics.error is None, result.metrics.error
    assert_complete_result(result.run_dir, scenario)
    assert_no_leftovers(result.metrics.run_prefix)
    return result


def test_no_frame_crosses_partitions_and_every_one_is_counted_at_the_edge(isolation):
    m = isolation.metrics
    main = next((isolation.run_dir / "main").iterdir())
    intrusions = 2 * 2 * 100  # two entries, two bursts of 100 frames each
    for host in ("h3", "h4"):  # job B: its captures hold none of job A's frames
        flows = _data_flows(main / "pcaps" / f"{host}.pcap")
        assert flows, f"{host} captured no data at all"
        assert not [f for f in flows if f >= BACKGROUND_FLOW_BASE]
    assert m.cross_partition_delivered == 0
    assert m.pkey_drops == intrusions  # every one counted, under its own reason
    assert m.drops_by_reason == {"pkey": intrusions}
    assert set(m.qos["pkey_drops_by_port"]) <= {"s2:3"}  # leaf2, its port from the spine
    assert m.unexplained_loss == 0 and m.verdict == "pass"


def test_the_other_job_keeps_its_solo_completion_time(isolation):
    m = isolation.metrics
    assert m.cct_ms is not None and m.solo_cct_ms is not None
    assert m.share_of_solo >= 0.8  # job A's traffic costs job B at most the scheduling noise


@pytest.fixture(scope="module")
def arbitration(tmp_path_factory):
    scenario = sc.load("checkpoint-vs-allreduce")
    result = run(scenario, _target(), tmp_path_factory.mktemp("qos"))
    assert result.metrics.error is None, result.metrics.error
    assert_complete_result(result.run_dir, scenario)
    assert_no_leftovers(result.metrics.run_prefix)
    return result.metrics


def test_gradient_favoured_weights_keep_the_allreduce_at_80_percent_of_solo(arbitration):
    favoured = arbitration.arbitration["gradient-favoured"]
    assert favoured.verdict == "pass"
    assert favoured.gradient_share_of_solo >= 0.8
    assert favoured.checkpoint_frames > 0 and favoured.checkpoint_share > 0  # it progresses


def test_equal_weights_do_not(arbitration):
    equal = arbitration.arbitration["equal-weights"]
    assert equal.verdict == "pass"
    assert equal.gradient_share_of_solo < 0.8
    assert equal.checkpoint_share > arbitration.arbitration["gradient-favoured"].checkpoint_share


def test_the_arbitration_configuration_and_class_bandwidth_are_reported(arbitration):
    q = arbitration.qos
    assert q["policy"]["swe"]["low"] == [[0, 224], [1, 32]]
    assert {s["scheduler"] for s in q["schedulers"].values()} == {"vl_arbitration"}
    assert set(q["class_bandwidth"]["pps"]) == {"gradient", "checkpoint"}
