"""bench/switchover.py's summary of several runs per fabric: median and range, failed
runs counted, reduced rates flagged (no emulation: the runs' figures are given)."""

from __future__ import annotations

import pytest

from bench import switchover


def _run(detection, switchover_ms, gap, by_direction=None, reroute=50.0):
    return {"detection_ms": detection, "switchover_ms": switchover_ms, "gap_ms": gap,
            "rtt_ms": 40.0, "verdict": "pass", "global_reroute_ms": reroute,
            "by_direction": by_direction or {"s1->s2": gap}}


def test_median_and_range_over_the_runs_and_failed_runs_are_counted_apart():
    runs = [_run(3.0, 2.0, 10.0), _run(5.0, 4.0, 30.0), _run(4.0, 9.0, 20.0),
            {"error": "no agent report (stalled)"}]
    fig = switchover.summarise("fattree:4", 20, runs)
    key = "switchover_fattree4"
    assert fig[f"{key}_runs"] == 3.0
    assert fig[f"{key}_errors"] == "no agent report (stalled)"
    assert (fig[f"{key}_detection_ms"], fig[f"{key}_detection_min_ms"],
            fig[f"{key}_detection_max_ms"]) == (4.0, 3.0, 5.0)
    assert (fig[f"{key}_switchover_ms"], fig[f"{key}_switchover_max_ms"]) == (4.0, 9.0)
    assert fig[f"{key}_gap_s1_to_s2_ms"] == 20.0
    row = next(line for line in switchover.table(fig).splitlines() if "fattree:4" in line)
    assert "| 20 | 3 (+1 failed) | 500 (reduced) |" in row
    assert "4.0 (3.0-5.0)" in row and "20.0 (10.0-30.0)" in row
    # the gap beyond detection + switchover, per run (5, 21, 7): its own median and range
    assert (fig[f"{key}_after_switchover_ms"], fig[f"{key}_after_switchover_min_ms"],
            fig[f"{key}_after_switchover_max_ms"]) == (7.0, 5.0, 21.0)
    assert row.endswith("| 7.0 (5.0-21.0) | 50.0 (50.0-50.0) |")


def test_a_reduced_rate_is_said_in_the_table_and_no_good_run_leaves_the_cells_empty():
    fig = switchover.summarise("fattree:6", 45, [{"error": "boom"}])
    row = next(line for line in switchover.table(fig).splitlines() if "fattree:6" in line)
    assert "(reduced)" in row and "0 (+1 failed)" in row
    assert "switchover_fattree6_detection_ms" not in fig


def test_an_unknown_fabric_is_refused_with_the_choices(monkeypatch):
    monkeypatch.setattr(switchover.os, "geteuid", lambda: 0)
    monkeypatch.setattr(switchover.shutil, "which", lambda name: "/usr/bin/" + name)
    with pytest.raises(ValueError, match="no switchover bench for ring:9: one of"):
        switchover.main(1, ["ring:9"])
