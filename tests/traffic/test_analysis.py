"""Loss, reordering and duplicates from synthetic captures with known answers."""

from __future__ import annotations

import json
import tempfile
from array import array
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from traffic.analysis import ReceiverTrace, analyze, write_metrics
from traffic.capture import CaptureStats
from traffic.frames import DATA_CODEC, ETHERTYPE_FABRIC, Kind, pfc_frame
from traffic.pcap import write_pcap
from traffic.result_table import format_table
from traffic.sender import SenderConfig, SenderResult, frame_template, write_log

T0 = 1_700_000_000_000_000_000


def data_frame(flow: int, psn: int, dlid: int = 2) -> bytes:
    cfg = SenderConfig(src_mac="02:00:00:00:00:01", dst_mac="02:00:00:00:00:02", slid=1,
                       dlid=dlid, flow=flow, count=1, rate_pps=1, payload=8)
    values = frame_template(cfg)
    values[DATA_CODEC.fields.index("psn")] = psn
    values[DATA_CODEC.fields.index("send_ts")] = T0 + psn * 1000
    return DATA_CODEC.pack_values(*values) + bytes(8)


def sender_log(tmp_path, flow: int, count: int):
    result = SenderResult(flow=flow, sent=count, target_pps=1000, achieved_pps=1000,
                          rate_kept=True, reason="", max_lateness_us=0, tx_retries=0,
                          send_ns=array("q", [T0 + i * 1000 for i in range(count)]))
    path = tmp_path / f"flow{flow}.csv"
    write_log(path, result)
    return path


def capture(tmp_path, name: str, flow_psns: list[tuple[int, int]], extra=()):
    frames = [(T0 + 5000 + i * 1000, data_frame(flow, psn)) for i, (flow, psn) in
              enumerate(flow_psns)]
    path = tmp_path / name
    write_pcap(path, [*frames, *extra])
    return path


def test_clean_run_counts_every_frame_once_in_order(tmp_path):
    log = sender_log(tmp_path, 1, 10)
    pcap = capture(tmp_path, "rx.pcap", [(1, i) for i in range(10)])
    m = analyze([log], [pcap])
    assert (m["sent"], m["received"], m["lost"], m["reordered"], m["duplicates"]) == \
        (10, 10, 0, 0, 0)
    assert m["partial"] is False
    assert m["flows"]["1"]["delay_us"]["min"] == 5.0


def test_loss_reorder_and_duplicates_have_known_answers(tmp_path):
    log = sender_log(tmp_path, 1, 10)
    # 3 and 7 lost; 5 arrives after 6 (one late frame); 8 captured twice
    order = [0, 1, 2, 4, 6, 5, 8, 8, 9]
    pcap = capture(tmp_path, "rx.pcap", [(1, p) for p in order])
    m = analyze([log], [pcap])
    assert (m["sent"], m["received"], m["lost"], m["reordered"], m["duplicates"]) == \
        (10, 8, 2, 1, 1)


def test_flows_are_counted_separately_across_receivers(tmp_path):
    logs = [sender_log(tmp_path, 1, 4), sender_log(tmp_path, 2, 4)]
    a = capture(tmp_path, "a.pcap", [(1, 0), (1, 1), (1, 2), (1, 3)])
    b = capture(tmp_path, "b.pcap", [(2, 0), (2, 2)])
    m = analyze(logs, [a, b])
    assert m["flows"]["1"]["lost"] == 0 and m["flows"]["2"]["lost"] == 2
    assert m["lost"] == 2 and m["sent"] == 8


def test_dlid_filter_ignores_frames_for_other_hosts(tmp_path):
    log = sender_log(tmp_path, 1, 2)
    frames = [(T0, data_frame(1, 0, dlid=2)), (T0 + 1, data_frame(1, 1, dlid=9))]
    write_pcap(tmp_path / "rx.pcap", frames)
    m = analyze([log], [ReceiverTrace(tmp_path / "rx.pcap", dlid=2)])
    assert m["received"] == 1 and m["lost"] == 1


def test_pause_and_credit_frames_are_counted_not_mistaken_for_data(tmp_path):
    log = sender_log(tmp_path, 1, 1)
    credit = bytes(12) + ETHERTYPE_FABRIC.to_bytes(2, "big") + bytes([0, Kind.CREDIT]) + bytes(10)
    extra = [(T0, bytes(pfc_frame(1, [100] + [0] * 7))), (T0, credit)]
    m = analyze([log], [capture(tmp_path, "rx.pcap", [(1, 0)], extra)])
    assert (m["pause_frames"], m["credit_frames"], m["received"]) == (1, 1, 1)


def test_truncated_capture_keeps_what_was_read_and_marks_partial(tmp_path):
    log = sender_log(tmp_path, 1, 10)
    pcap = capture(tmp_path, "rx.pcap", [(1, i) for i in range(10)])
    pcap.write_bytes(pcap.read_bytes()[:-20])
    m = analyze([log], [pcap])
    assert m["partial"] is True and m["received"] == 9
    assert any("rx.pcap" in p and "truncated" in p for p in m["problems"])


def test_missing_sender_log_and_capture_drops_mark_partial(tmp_path):
    pcap = capture(tmp_path, "rx.pcap", [(4, 0), (4, 1)])
    drops = CaptureStats(path=str(pcap), captured=2, received_by_filter=5, dropped_by_kernel=3)
    m = analyze([tmp_path / "nope.csv"], [pcap], [drops])
    assert m["partial"] is True
    assert m["flows"]["4"]["sent"] is None and m["unknown_frames"] == 2
    assert m["capture_drops"] == 3
    assert len(m["problems"]) == 3


def test_write_metrics_is_atomic_json_with_the_required_keys(tmp_path):
    log = sender_log(tmp_path, 1, 3)
    m = analyze([log], [capture(tmp_path, "rx.pcap", [(1, 0), (1, 2)])])
    path = write_metrics(tmp_path / "results" / "run1", m)
    loaded = json.loads(path.read_text())
    assert {"sent", "received", "lost", "reordered", "duplicates", "partial", "flows"} <= \
        loaded.keys()
    assert [p.name for p in path.parent.iterdir()] == ["metrics.json"]


def test_table_has_fixed_columns_and_a_total_line(tmp_path):
    logs = [sender_log(tmp_path, 1, 3), sender_log(tmp_path, 22, 3)]
    m = analyze(logs, [capture(tmp_path, "rx.pcap", [(1, 0), (1, 1), (22, 1)])])
    lines = format_table(m).splitlines()
    assert lines[0].lstrip("#").split() == ["flow", "sent", "recv", "lost", "reord", "dups",
                                            "rx_pps", "dly_min", "dly_avg", "dly_max", "rate"]
    assert len({len(line) for line in lines}) == 1
    assert lines[-1].split()[:5] == ["total", "6", "3", "3", "0"]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 19), max_size=40))
def test_counts_match_the_definitions_for_any_arrival_order(arrivals):
    """lost = sent - distinct; dups = copies - distinct; reordered = first copies below the max."""
    with tempfile.TemporaryDirectory() as d:
        log = sender_log(Path(d), 1, 20)
        m = analyze([log], [capture(Path(d), "rx.pcap", [(1, p) for p in arrivals])])
    distinct, late, highest = set(), 0, -1
    for psn in arrivals:
        if psn not in distinct:
            late += psn < highest
            highest = max(highest, psn)
            distinct.add(psn)
    assert (m["received"], m["lost"], m["duplicates"], m["reordered"]) == \
        (len(distinct), 20 - len(distinct), len(arrivals) - len(distinct), late)


def test_switch_drop_counters_explain_the_loss(tmp_path):
    log = sender_log(tmp_path, 1, 10)
    pcap = capture(tmp_path, "rx.pcap", [(1, i) for i in range(7)])
    drops = {"s1": {(2, "tail"): (2, 200), (1, "not_fabric"): (5, 400)},
             "s2": {(1, "no_route"): (1, 100)}}
    m = analyze([log], [pcap], switch_drops=drops)
    assert m["lost"] == 3 and m["unexplained_loss"] == 0
    assert m["drops_by_reason"] == {"no_route": 1, "not_fabric": 5, "tail": 2}
    assert analyze([log], [pcap])["unexplained_loss"] is None


def test_command_line_writes_metrics_and_prints_the_table(tmp_path, capsys):
    from traffic.analysis import main

    log = sender_log(tmp_path, 1, 4)
    pcap = capture(tmp_path, "rx.pcap", [(1, 0), (1, 1), (1, 2), (1, 3)])
    assert main(["--run-dir", str(tmp_path / "run"), "--sent", str(log), "--pcap", str(pcap)]) == 0
    assert json.loads((tmp_path / "run" / "metrics.json").read_text())["received"] == 4
    assert capsys.readouterr().out.splitlines()[-1].split()[:5] == ["total", "4", "4", "0", "0"]
