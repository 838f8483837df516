"""bench/retransmission.py's summary: per fabric and mode, median and range of the two
gaps, the frames retransmitted and the CCT, failed runs counted apart (no emulation)."""

from __future__ import annotations

import pytest

from bench import retransmission


def _run(gap, delivery, retransmitted, cct=900.0, verdict="pass"):
    return {"gap_ms": gap, "delivery_gap_ms": delivery, "retransmitted": retransmitted,
            "cct_ms": cct, "verdict": verdict}


def test_each_mode_has_its_own_row_with_median_and_range():
    gbn = [_run(15.0, 300.0, 128), _run(12.0, 200.0, 96), _run(20.0, 250.0, 110)]
    sel = [_run(14.0, 40.0, 6), {"error": "no delivery gap (stalled)"},
           _run(16.0, 60.0, 9, verdict="degraded")]
    fig = {**retransmission.summarise("fattree:4", "go-back-n", gbn),
           **retransmission.summarise("fattree:4", "selective", sel)}
    gkey, skey = "retransmission_fattree4_gobackn", "retransmission_fattree4_selective"
    assert (fig[f"{gkey}_delivery_gap_ms"], fig[f"{gkey}_delivery_gap_min_ms"],
            fig[f"{gkey}_delivery_gap_max_ms"]) == (250.0, 200.0, 300.0)
    assert (fig[f"{gkey}_retransmitted"], fig[f"{gkey}_retransmitted_max"]) == (110, 128)
    assert fig[f"{skey}_runs"] == 2.0 and fig[f"{skey}_errors"] == "no delivery gap (stalled)"
    assert fig[f"{skey}_not_passed"] == "degraded"
    rows = [line for line in retransmission.table(fig, ["fattree:4"]).splitlines()
            if "fattree:4" in line]
    assert rows[0] == ("| fattree:4 | go-back-n | 3 | 15.0 (12.0-20.0) | 250.0 (200.0-300.0) "
                       "| 110 (96-128) | 900.0 (900.0-900.0) |")
    assert rows[1].startswith("| fattree:4 | selective | 2 | 15.0 (14.0-16.0) | 50.0 (40.0-60.0)")


def test_an_unknown_fabric_is_refused_with_the_choices(monkeypatch):
    monkeypatch.setattr(retransmission.os, "geteuid", lambda: 0)
    monkeypatch.setattr(retransmission.shutil, "which", lambda name: "/usr/bin/" + name)
    with pytest.raises(ValueError, match="no retransmission bench for ring:9: one of"):
        retransmission.main(1, ["ring:9"])
