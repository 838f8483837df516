"""The thin slice end to end in Mininet: compiler, switch, SM, traffic, capture, analysis.

Asserts from the receiver's pcap, not from the run's own summary.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fabriclab import scenario as sc
from fabriclab.runner import FABRIC_P4, ROOT, run
from tests.scenarios.result_contract import assert_complete_result, assert_no_leftovers
from topologies.ledger import prefixed_names
from topologies.targets import Target, resolve
from traffic.frames import DATA_CODEC, ETHERTYPE_FABRIC
from traffic.pcap import read_frames

pytestmark = [pytest.mark.mininet, pytest.mark.slow]


def _data_psns(pcap: Path, flow: int) -> list[int]:
    fields = DATA_CODEC.fields
    psns = []
    for _ts, frame in read_frames(pcap):
        if int.from_bytes(frame[12:14], "big") != ETHERTYPE_FABRIC:
            continue
        values = dict(zip(fields, DATA_CODEC.unpack(frame), strict=False))
        if values["flow_id"] == flow:
            psns.append(values["psn"])
    return psns


@pytest.fixture
def no_leftovers():
    before = prefixed_names()  # (tests that emulate take turns: nothing of others' here)
    yield
    assert prefixed_names() - before == set(), "the run removed every interface it created"


@pytest.mark.parametrize("target_name", ["embedded", "bmv2"])
def test_stream_frames_all_arrive_once_in_order_and_unknown_dlid_is_counted(
        stream_run, target_name):
    if target_name == "bmv2":
        pytest.importorskip("mininet")
        try:
            target = resolve("bmv2")
        except Exception as exc:  # noqa: BLE001
            pytest.skip(str(exc))
    else:
        target = Target.EMBEDDED
    scenario = sc.load("stream")
    frames = scenario.traffic.frames
    # the same run test_bmv2_scenarios.py asserts on (conftest.py: shared_runs)
    shared = stream_run(target)
    result = shared.result
    assert shared.left_behind == set(), "the run removed every interface it created"

    assert result.metrics.error is None, result.metrics.error
    psns = _data_psns(result.run_dir / "pcaps" / "h2.pcap", flow=1)
    assert psns == list(range(frames)), "every frame arrived exactly once, in order"
    check = result.metrics.checks["unknown_dlid"]
    assert check.dropped_no_route == scenario.checks.unknown_dlid_frames
    assert _data_psns(result.run_dir / "pcaps" / "h2.pcap", flow=0xFFFF) == []
    written = json.loads((result.run_dir / "metrics.json").read_text())
    assert (written["sent"], written["received"], written["lost"]) == (frames, frames, 0)
    assert written["verdict"] == "pass"
    # the shipped scenario's result contract (result_contract.FULL_SIZE_TESTS)
    assert_complete_result(result.run_dir, scenario)
    assert_no_leftovers(result.metrics.run_prefix)


def test_a_run_killed_half_way_is_cleaned_up_by_the_next(tmp_path, no_leftovers):
    """SIGKILL leaves switches and veths behind; the next run removes them and works."""
    assert FABRIC_P4.exists()
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    proc = subprocess.Popen([sys.executable, "-m", "fabriclab.cli", "run", "--target",
                             "embedded", "--results", str(tmp_path)], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        before = prefixed_names()
        while time.monotonic() < deadline and not prefixed_names() - before:
            time.sleep(0.1)
        time.sleep(1.0)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    result = run(sc.load("stream"), Target.EMBEDDED, tmp_path)
    assert result.metrics.error is None, result.metrics.error
    assert result.metrics.lost == 0
