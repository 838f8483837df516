"""The RC transport and training-job report lines (traffic/report_sections.py)."""

from __future__ import annotations

import json

from traffic.metrics import FailureGap, RunMetrics, TrainingMetrics
from traffic.report_sections import training_notes, training_rows, transport_line, transport_rows


def _nic(retx, paused, timeouts, deferred):
    return {"transport": "rc", "rc_config": {"paused_timeouts": "retransmit"},
            "rc": {"retransmitted": retx, "retransmitted_while_paused": paused,
                   "timeouts": timeouts, "timeouts_deferred": deferred, "nak_go_backs": 1},
            "rc_per_flow": {"1001": {"retransmitted": retx, "retransmitted_while_paused": paused,
                                     "timeouts": timeouts, "timeouts_deferred": deferred,
                                     "nak_go_backs": 1,
                                     "rtt": {"srtt_ms": 12.5, "rto_ms": 30.0, "samples": 9}}}}


def test_transport_line_names_the_retransmissions_while_paused_per_flow():
    m = RunMetrics(nics={"h1": _nic(300, 256, 3, 0), "h2": _nic(0, 0, 0, 0)})
    line = transport_line(m)
    assert "300 frames retransmitted, 256 of them by timeouts while" in line
    assert "h1/1001: 256" in line and "h2/1001" not in line
    assert "(paused timeouts: retransmit)" in line
    (row,) = transport_rows(m)  # h2's flow did nothing worth a row
    assert row[:4] == ("h1", "1001", "300", "256") and row[7:] == ("12.5", "30", "9")


def test_transport_line_names_the_worst_flows_only():
    nics = {f"h{i}": _nic(10 + i, 5 + i, 1, 0) for i in range(8)}
    line = transport_line(RunMetrics(nics=nics))
    assert "(h7/1001: 12, h6/1001: 11, h5/1001: 10, h4/1001: 9, h3/1001: 8, 3 more flows)" \
        in line


def test_no_transport_line_without_rc():
    assert transport_line(RunMetrics(nics={"h1": {"transport": "ud"}})) is None


def test_training_rows_and_notes_state_the_contrast():
    ib = TrainingMetrics("ib-like", 40, 40, baseline_iteration_ms=200.0, comm_share=0.5,
                         parallel_efficiency=0.95, iterations_slowed=2, failures=2,
                         failure_gaps=(FailureGap("s1-s3", 1, 40.0, (1,), True, 14.0),
                                       FailureGap("s1-s3", 2, None)),
                         failures_per_day=10, compute_lost_per_failure_s=0.2,
                         compute_lost_per_day_s=2.0, compute_lost_day_share=2.0 / 86400)
    roce = TrainingMetrics("roce-like", 40, 4, failures=1, interruptions=1,
                           failure_gaps=(FailureGap("s1-s3", 1, 2.0, (1,), False),),
                           interrupted_by=("h1: flow 1001: 7 retransmission timeouts",),
                           interrupted_at_s=1.9, rollback_s=1.9, compute_lost_s=31.9)
    rows = training_rows({"ib-like": ib, "roce-like": roce})
    assert rows[0][7] == "40 (14), idle" and rows[1][7] == "never"
    assert rows[1][8] == "1" and rows[1][9] == "31.9"
    notes = training_notes({"ib-like": ib, "roce-like": roce})
    assert any("ib-like: no queue pair exhausted" in n for n in notes)
    assert any("roce-like: interrupted at 1.9 s" in n and "31.9 s of compute lost" in n
               for n in notes)


def test_a_comparison_report_puts_the_fabrics_side_by_side(tmp_path):
    from traffic.report import write_report

    m = RunMetrics(scenario="training-job", flow_control="compare", verdict="incomplete",
                   verdict_reasons=("roce-like: the collective could not complete",),
                   training={"ib-like": TrainingMetrics("ib-like", 40, 40, interruptions=0),
                             "roce-like": TrainingMetrics("roce-like", 40, 4,
                                                          interruptions=1)},
                   compared_runs={"ib-like": "run-ib", "roce-like": "run-roce"})
    m.write(tmp_path / "metrics.json")
    md, _html = write_report(tmp_path)
    text = md.read_text()
    assert "| run on roce-like | `run-roce` |" in text and "| sent |" not in text
    assert "| roce-like | 4/40 |" in text


def test_a_comparison_report_has_one_row_of_run_figures_per_fabric(tmp_path):
    from traffic.report import write_report

    m = RunMetrics(scenario="incast-modes", flow_control="compare", verdict="incomplete",
                   compared={"lossy": {"sent": 768, "received": 700, "lost": 68,
                                       "busbw": 510000.0, "verdict": "incomplete"},
                             "credit": {"sent": 768, "received": 768, "lost": 0,
                                        "cct_ms": 194.0, "verdict": "pass"}},
                   compared_runs={"lossy": "run-l", "credit": "run-c"})
    m.write(tmp_path / "metrics.json")
    (tmp_path / "scenario.json").write_text(json.dumps(
        {"name": "incast-modes", "compare": [{"name": "lossy"}, {"name": "credit"}]}))
    md, _html = write_report(tmp_path)
    text = md.read_text()
    assert "| fabric | sent | received | lost | cct_ms | busbw | verdict |" in text
    lossy = text.index("| lossy | 768 | 700 | 68 | - | 510 kB/s | incomplete |")
    credit = text.index("| credit | 768 | 768 | 0 | 194 | - | pass |")
    assert lossy < credit, "in the scenario's [[compare]] order, not metrics.json's sorted keys"
