"""What every result directory of a run holds (DESIGN.md "One run of a scenario"), checked by
the shipped-scenario test and by the tests that run a shipped scenario at full size."""

from __future__ import annotations

import json
from pathlib import Path

from fabriclab import scenario as sc
from topologies.ledger import prefixed_names

RESULT_FILES = ("scenario.json", "versions.json", "topology.json", "address_book.json",
                "counters.json", "metrics.json", "report.md")

# Shipped scenarios whose own Mininet test runs them at full size and checks this contract
# (so the shipped-scenario test does not run them a second time, cut down).
FULL_SIZE_TESTS = {"stream": "test_stream_slice.py (embedded and bmv2)",
                   "incast": "test_flow_control_modes.py (its own mode, credit)",
                   "pfc-storm": "test_fault_scenarios.py (the PFC storm on embedded)",
                   "partition-isolation": "test_qos_scenarios.py",
                   "checkpoint-vs-allreduce": "test_qos_scenarios.py",
                   "training-job": "test_training_job_mininet.py"}


def assert_complete_result(run_dir: Path, scenario: sc.Scenario | None = None) -> None:
    """`run_dir` holds every promised file and its captures; scenario.json is `scenario`
    with its defaults resolved (when given)."""
    for file in RESULT_FILES:
        assert (run_dir / file).exists(), f"{run_dir.name}: no {file}"
    assert list((run_dir / "pcaps").glob("*.pcap")), f"{run_dir.name}: captures were kept"
    if scenario is not None:
        as_run = json.loads((run_dir / "scenario.json").read_text())
        assert sc.parse(as_run, "as run") == scenario, "the scenario as run, defaults resolved"


def assert_no_leftovers(prefix: str | None) -> None:
    assert prefix, "the run recorded its name prefix"
    left = sorted(n for n in prefixed_names() if n.startswith(prefix))
    assert left == [], f"interfaces left behind: {left}"
