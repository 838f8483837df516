"""metrics.json as a typed, versioned schema: written, read back, and older files still read."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest

from traffic.metrics import (
    SCHEMA,
    MetricsSchemaError,
    Reconciliation,
    RunMetrics,
    UnknownDlidCheck,
)
from traffic.report import write_report

V1 = Path(__file__).parent / "data" / "metrics_v1.json"


def test_a_v1_file_from_an_older_run_reads_with_its_figures_typed():
    m = RunMetrics.read(V1)
    assert m.schema == SCHEMA and m.verdict == "pass" and m.topology == "fattree:4"
    assert m.flows["1001"].delay_us.max == pytest.approx(196494.582)
    assert m.recovery["1001"].protected and m.recovery_gap_protected_ms == pytest.approx(69.107, rel=1e-3)
    assert m.paused_ports[0].klass == 0 and m.paused_ports[0].switch == "s1"
    assert m.link_failures[0].link == "s1-s9"
    assert m.reconciliation is None, "v1 had no reconciliation"


def test_metrics_round_trip_through_json_unchanged(tmp_path):
    m = dataclasses.replace(
        RunMetrics.read(V1), verdict="fail", verdict_reasons=("switches counted 5 more",),
        checks={"unknown_dlid": UnknownDlidCheck(0xBEEF, 3, 3, "s1", 1, True)},
        reconciliation=Reconciliation(lost=63, counted_drops=63, on_failed_links=0))
    path = m.write(tmp_path / "metrics.json")
    data = json.loads(path.read_text())
    assert data["schema"] == SCHEMA and data["paused_ports"][0]["class"] == 0
    assert RunMetrics.read(path) == m


@pytest.mark.parametrize("content, message", [
    ({"schema": "fabriclab.metrics/9"}, "schema 'fabriclab.metrics/9' is not one this "
                                        "version reads"),
    ([1, 2], "expected a JSON object, found list"),
    ({"schema": SCHEMA, "colour": 1}, r"unknown field\(s\) colour"),
    ({"schema": SCHEMA, "sent": "many"}, "sent: expected int, found 'many'"),
    ({"schema": SCHEMA, "flows": {"1": {"delay_us": 3}}}, r"flows.1.delay_us: expected an "
                                                          "object for Delay"),
])
def test_files_this_version_cannot_read_are_named_with_what_is_wrong(tmp_path, content, message):
    path = tmp_path / "metrics.json"
    path.write_text(json.dumps(content))
    with pytest.raises(MetricsSchemaError, match=message):
        RunMetrics.read(path)


def test_an_old_result_directory_still_renders(tmp_path):
    run = tmp_path / "20261204-034808-link-failure-allreduce"
    run.mkdir()
    shutil.copy(V1, run / "metrics.json")
    text = write_report(run)[0].read_text()
    assert "| recovery_gap_ms | 83.86 |" in text
    assert "| verdict | **pass** |" in text


def test_an_unreadable_schema_leaves_the_sections_out_with_the_reason(tmp_path):
    run = tmp_path / "20261204-000000-future"
    run.mkdir()
    (run / "metrics.json").write_text(json.dumps({"schema": "fabriclab.metrics/9"}))
    text = write_report(run)[0].read_text()
    assert "schema 'fabriclab.metrics/9' is not one this version reads" in text
