"""RC transport in the analysis: retransmissions, ACK/NAK frames, losses on failed links,
victim goodput, and inputs that cannot be trusted; synthetic captures with known answers."""

from __future__ import annotations

import json

import pytest

from traffic.analysis import ReceiverTrace, analyze, attribute_link_losses, main
from traffic.frames import (
    DATA_CODEC,
    ETHERTYPE_FABRIC,
    OPCODE_RC_ACK,
    OPCODE_RC_SEND,
    SYNDROME_NAK_SEQ,
    Kind,
)
from traffic.pcap import write_pcap
from traffic.result_table import format_table
from traffic.sender import write_log_rows
from traffic.switch_counters import topology_ports
from traffic.timing import goodput_timeline, victim_goodput

T0 = 1_700_000_000_000_000_000
MS = 1_000_000
H1, H2 = 1, 2  # LIDs: h1 sends flow 1 to h2
PATH = ["h1-s1", "s1-s3", "s3-s2", "s2-h2"]


def rc_frame(flow: int, psn: int, send_ts: int, dlid: int = H2, opcode: int = OPCODE_RC_SEND,
             chunk: int = 0) -> bytes:
    header = DATA_CODEC.pack(dst_addr=2, src_addr=1, ether_type=ETHERTYPE_FABRIC,
                             kind=int(Kind.DATA), dlid=dlid, slid=H1 if dlid == H2 else H2,
                             pkt_len=36, opcode=opcode, psn=psn, flow_id=flow, chunk=chunk,
                             send_ts=send_ts)
    return header + (bytes(8) if opcode != OPCODE_RC_ACK else b"")


def ack(flow: int, psn: int, at: int, syndrome: int = 0) -> tuple[int, bytes]:
    """An ACK (or NAK) as the data sender h1 captures it: addressed to h1's LID."""
    return at, rc_frame(flow, psn, at, dlid=H1, opcode=OPCODE_RC_ACK, chunk=syndrome)


def go_back_n_run(tmp_path, resend=(3,)):
    """Flow 1, PSNs 0..5 sent 1 ms apart; the first copy of PSN 3 is lost in the fabric and
    the PSNs in `resend` go again from 10 ms on (4 and 5, if resent, arrive twice)."""
    rows = [(1, psn, T0 + psn * MS) for psn in range(6)]
    rows += [(1, psn, T0 + (10 + i) * MS) for i, psn in enumerate(resend)]
    write_log_rows(tmp_path / "h1.sent.csv", rows)
    arrived = [(ts + 100_000, rc_frame(flow, psn, ts)) for flow, psn, ts in rows
               if (psn, ts) != (3, T0 + 3 * MS)]
    write_pcap(tmp_path / "h2.pcap", sorted(arrived))
    acks = [ack(1, 2, T0 + 3 * MS), ack(1, 2, T0 + 5 * MS, SYNDROME_NAK_SEQ), ack(1, 5, T0 + 15 * MS)]
    write_pcap(tmp_path / "h1.pcap", acks)
    return ([tmp_path / "h1.sent.csv"],
            [ReceiverTrace(tmp_path / "h2.pcap", dlid=H2),
             ReceiverTrace(tmp_path / "h1.pcap", dlid=H1)])


def failure(down_ms: float, restored_ms: float | None, link: str = "s1-s3") -> dict:
    return {"link": link, "down_ns": T0 + int(down_ms * MS),
            "restored_ns": None if restored_ms is None else T0 + int(restored_ms * MS)}


# --------------------------------------------------------------------------- retransmission


def test_a_frame_lost_once_and_retransmitted_is_not_lost_but_lost_in_fabric(tmp_path):
    logs, traces = go_back_n_run(tmp_path, resend=(3,))
    m = analyze(logs, traces)
    flow = m["flows"]["1"]
    assert (flow["sent"], flow["transmissions"], flow["retransmitted"]) == (6, 7, 1)
    assert (flow["received"], flow["lost"], flow["lost_in_fabric"]) == (6, 0, 1)
    assert (m["lost"], m["retransmitted"], m["lost_in_fabric"], m["transmissions"]) == (0, 1, 1, 7)
    assert flow["reordered"] == 1  # PSN 3 arrives after 4 and 5
    assert m["partial"] is False


def test_go_back_n_copies_of_frames_that_arrived_are_duplicates_not_losses(tmp_path):
    logs, traces = go_back_n_run(tmp_path, resend=(3, 4, 5))
    m = analyze(logs, traces)
    assert (m["transmissions"], m["retransmitted"], m["lost_in_fabric"]) == (9, 3, 1)
    assert (m["lost"], m["duplicates"]) == (0, 2)


def test_ack_and_nak_frames_are_transport_control_never_data(tmp_path):
    logs, traces = go_back_n_run(tmp_path)
    m = analyze(logs, traces)
    assert (m["ack_frames"], m["nak_frames"]) == (2, 1)
    assert list(m["flows"]) == ["1"] and m["unknown_frames"] == 0
    assert m["flows"]["1"]["duplicates"] == 0  # ACKs carry flow 1's PSNs: not copies of them


def test_the_loss_is_unexplained_without_a_failure_and_the_run_suspect(tmp_path):
    logs, traces = go_back_n_run(tmp_path)
    m = analyze(logs, traces, switch_drops={"s1": {}, "s3": {}})
    assert m["unexplained_loss"] == 1 and m["suspect"] is True
    assert m["lost_on_failed_links"] is None and m["lost_on_failed_links_by_link"] is None
    assert any(p.startswith("suspect: 1 transmission") for p in m["problems"])
    assert m["partial"] is False  # every input was read; the result is suspect, not partial
    assert "# SUSPECT: suspect: 1" in format_table(m)


def test_switch_drops_explain_loss_in_the_fabric_not_unique_loss(tmp_path):
    logs, traces = go_back_n_run(tmp_path)
    m = analyze(logs, traces, switch_drops={"s1": {(2, "tail"): (1, 114)}})
    assert (m["lost"], m["unexplained_loss"], m["suspect"]) == (0, 0, False)


# --------------------------------------------------------------------------- failed links


def test_a_transmission_lost_while_its_link_was_down_is_attributed_to_the_link(tmp_path):
    logs, traces = go_back_n_run(tmp_path)
    m = analyze(logs, traces, switch_drops={}, failures=[failure(2.5, 4.0)],
                flow_paths={1: PATH})
    assert m["lost_on_failed_links"] == 1
    assert m["lost_on_failed_links_by_link"] == {"s1-s3": 1}
    assert (m["unexplained_loss"], m["suspect"]) == (0, False)
    assert "1 lost on failed links (s1-s3 1)" in format_table(m)


def test_a_counted_drop_inside_a_failure_window_is_explained_once(tmp_path):
    # The lost transmission lies in the window AND a switch counted a drop (no_route
    # while routes changed): the counter explains it, the link explains nothing more.
    logs, traces = go_back_n_run(tmp_path)
    m = analyze(logs, traces, switch_drops={"s3": {(2, "no_route"): (1, 114)}},
                failures=[failure(2.5, 4.0)], flow_paths={1: PATH})
    assert m["lost_on_failed_links"] == 1  # candidates in the window
    assert (m["unexplained_loss"], m["suspect"]) == (0, False)  # not -1


@pytest.mark.parametrize(("fail", "paths", "expected"), [
    (failure(3.0 + 50, None), {1: PATH}, 1),  # down 50 ms after the send: within the slack
    (failure(3.0 + 51, None), {1: PATH}, 0),  # ... 51 ms after: not this link's loss
    (failure(-60, 3.0 - 50), {1: PATH}, 1),  # restored 50 ms before the send: slack
    (failure(-60, 3.0 - 51), {1: PATH}, 0),
    (failure(0, None, link="s3-s1"), {"1": PATH}, 1),  # either name order, JSON flow keys
    (failure(0, None, link="s1:2-s3:1"), {1: PATH}, 1),  # the SM timeline's spelling
    (failure(0, None), {1: ["h1-s1", "s1-s4", "s4-s2", "s2-h2"]}, 0),  # flow avoids s1-s3
])
def test_attribution_window_is_the_failure_widened_by_the_slack(tmp_path, fail, paths, expected):
    logs, traces = go_back_n_run(tmp_path)
    result = attribute_link_losses(logs, traces, [fail], paths)
    assert result["total"] == expected
    assert result["by_link"] == {fail["link"]: expected}
    assert result["by_flow"] == ({"1": 1} if expected else {})
    assert result["problems"] == []


def test_a_transmission_in_two_failure_windows_is_counted_once(tmp_path):
    logs, traces = go_back_n_run(tmp_path)
    fails = [failure(0, None), failure(1, None, link="s3-s2")]
    result = attribute_link_losses(logs, traces, fails, {1: PATH}, slack_ns=0)
    assert result["total"] == 1 and result["by_link"] == {"s1-s3": 1, "s3-s2": 0}


def test_failures_without_flow_paths_or_malformed_are_problems_not_tracebacks(tmp_path):
    logs, traces = go_back_n_run(tmp_path)
    m = analyze(logs, traces, failures=[failure(0, None)])
    assert m["partial"] is True and m["lost_on_failed_links"] is None
    assert any("without flow paths" in p for p in m["problems"])
    m = analyze(logs, traces, failures=[{"link": "s1-s3"}, failure(0, None)],
                flow_paths={1: PATH})
    assert m["lost_on_failed_links"] == 1
    assert any("expected {'link', 'down_ns', 'restored_ns'}" in p for p in m["problems"])


# --------------------------------------------------------------------------- victim goodput


def test_victim_goodput_is_the_fault_runs_rate_over_the_baselines_in_lined_up_windows():
    base_start, fault_start = T0, T0 + 3600 * 1000 * MS  # two runs an hour apart
    baseline = {7: [base_start + i * MS for i in range(2000)],  # 1000 fps
                8: [base_start + i * MS for i in range(2000)]}
    fault = {7: [fault_start + i * 2 * MS for i in range(1000)],  # 500 fps
             8: [fault_start + i * MS for i in range(2000)],
             9: [fault_start + i * MS for i in range(2000)]}  # not a victim
    window = (500 * MS, 1500 * MS)  # the same offsets from each run's own start
    g = victim_goodput(fault, baseline, [7, "8"],
                       tuple(fault_start + w for w in window),
                       tuple(base_start + w for w in window))
    assert g["baseline_pps"] == 2000.0 and g["fault_pps"] == 1500.0
    assert g["ratio"] == 0.75
    assert g["flows"] == {"7": 0.5, "8": 1.0}


def test_victim_goodput_ratio_is_none_when_the_baseline_delivered_nothing():
    g = victim_goodput({1: [T0]}, {}, [1], (T0, T0 + MS), (T0, T0 + MS))
    assert g["ratio"] is None and g["flows"] == {"1": None} and g["fault_pps"] == 1000.0


def test_goodput_timeline_counts_frames_per_second_per_bin():
    arrivals = {1: [T0, T0 + 1 * MS, T0 + 12 * MS, T0 - 1], 2: [T0 + 25 * MS]}
    assert goodput_timeline(arrivals, T0, 10) == {1: [200.0, 100.0, 0.0], 2: [0.0, 0.0, 100.0]}
    assert goodput_timeline(arrivals, T0, 10, end_ns=T0 + 20 * MS) == {
        1: [200.0, 100.0], 2: [0.0, 0.0]}


# --------------------------------------------------------------------------- bad input


def test_a_corrupt_capture_is_a_problem_and_the_other_captures_still_count(tmp_path):
    logs, traces = go_back_n_run(tmp_path)
    (tmp_path / "h1.pcap").write_bytes(b"this is not a capture at all")
    m = analyze(logs, traces)
    assert m["partial"] is True and m["received"] == 6
    assert any("h1.pcap" in p and "not a pcap" in p for p in m["problems"])


def test_a_missing_sender_log_leaves_the_flows_transport_figures_unknown(tmp_path):
    _logs, traces = go_back_n_run(tmp_path)
    m = analyze([tmp_path / "gone.sent.csv"], traces, switch_drops={})
    assert m["partial"] is True
    assert any("gone.sent.csv: sender log missing" in p for p in m["problems"])
    flow = m["flows"]["1"]
    assert (flow["transmissions"], flow["retransmitted"], flow["lost_in_fabric"]) == (
        None, None, None)
    assert m["unknown_frames"] == 6 and m["ack_frames"] == 2


def test_unreadable_sender_log_and_summary_are_problems(tmp_path):
    logs, traces = go_back_n_run(tmp_path)
    (tmp_path / "h1.summary.json").write_text('{"flows": {"1": ')
    (tmp_path / "h9.sent.csv").write_bytes(b"\xff\xfe\x00garbage")
    m = analyze([*logs, tmp_path / "h9.sent.csv"], traces)
    assert m["partial"] is True and m["lost_in_fabric"] == 1
    assert any("h1.summary.json: sender summary could not be read" in p for p in m["problems"])
    assert any("h9.sent.csv" in p for p in m["problems"])


def write_counters(path, run_id, switches) -> None:
    path.write_text(json.dumps({"run_id": run_id, **switches}))


TOPOLOGY = {"nodes": [{"name": n, "kind": "NodeKind.SWITCH"} for n in ("s1", "s2", "s3")]
            + [{"name": h, "kind": "NodeKind.HOST"} for h in ("h1", "h2")],
            "links": [{"a": "s1", "a_port": 1, "b": "h1", "b_port": 0},
                      {"a": "s2", "a_port": 1, "b": "h2", "b_port": 0},
                      {"a": "s1", "a_port": 2, "b": "s3", "b_port": 1},
                      {"a": "s2", "a_port": 2, "b": "s3", "b_port": 2}]}


def test_topology_ports_are_the_switches_wired_ports():
    assert topology_ports(TOPOLOGY) == {"s1": {1, 2}, "s2": {1, 2}, "s3": {1, 2}}


def test_counters_of_this_run_explain_the_loss(tmp_path):
    logs, traces = go_back_n_run(tmp_path)
    write_counters(tmp_path / "counters.json", "run-a",
                   {"s3": {"port1/tail": {"packets": 1, "bytes": 114}}})
    m = analyze(logs, traces, switch_drops=tmp_path / "counters.json", run_id="run-a", topology=TOPOLOGY)
    assert (m["unexplained_loss"], m["drops_by_reason"], m["partial"]) == (0, {"tail": 1}, False)


def test_counters_of_another_run_are_ignored_and_named(tmp_path):
    logs, traces = go_back_n_run(tmp_path)
    write_counters(tmp_path / "counters.json", "run-b",
                   {"s3": {"port1/tail": {"packets": 1, "bytes": 114}}})
    m = analyze(logs, traces, switch_drops=tmp_path / "counters.json", run_id="run-a")
    assert m["partial"] is True
    assert (m["unexplained_loss"], m["drops_by_reason"], m["suspect"]) == (None, None, None)
    problem = next(p for p in m["problems"] if "counters.json" in p)
    assert "'run-b'" in problem and "'run-a'" in problem and "ignored" in problem
    assert (m["lost"], m["lost_in_fabric"], m["ack_frames"]) == (0, 1, 2)  # the rest is there


@pytest.mark.parametrize(("switches", "named"), [
    ({"s9": {"port1/tail": {"packets": 1, "bytes": 114}}}, "s9"),
    ({"s3": {"port7/tail": {"packets": 1, "bytes": 114}}}, "s3:7"),
    ({"s3": {}, "s4": {}}, "s4"),  # a switch of another fabric, even with nothing dropped
])
def test_counters_naming_switches_or_ports_not_in_the_topology_are_ignored(
        tmp_path, switches, named):
    logs, traces = go_back_n_run(tmp_path)
    write_counters(tmp_path / "counters.json", "run-a", switches)
    m = analyze(logs, traces, switch_drops=tmp_path / "counters.json", run_id="run-a", topology=TOPOLOGY)
    assert m["partial"] is True and m["unexplained_loss"] is None
    assert any("counters.json" in p and named in p and "not in this run's topology" in p
               for p in m["problems"])


@pytest.mark.parametrize("content", ['{"s1": {"port1/tail": ', '{"s1": {"tail": 3}}', "[1, 2]"])
def test_unreadable_counters_are_a_problem_not_a_traceback(tmp_path, content):
    logs, traces = go_back_n_run(tmp_path)
    (tmp_path / "counters.json").write_text(content)
    m = analyze(logs, traces, switch_drops=tmp_path / "counters.json")
    assert m["partial"] is True and m["unexplained_loss"] is None
    assert any(p.startswith(f"{tmp_path / 'counters.json'}: ") for p in m["problems"])


def test_command_line_ignores_counters_of_another_run(tmp_path, capsys):
    logs, traces = go_back_n_run(tmp_path)
    write_counters(tmp_path / "counters.json", "run-b", {"s3": {}})
    (tmp_path / "topology.json").write_text(json.dumps(TOPOLOGY))
    status = main(["--run-dir", str(tmp_path / "run"), "--sent", *map(str, logs),
                   "--pcap", str(tmp_path / "h2.pcap"), "--counters",
                   str(tmp_path / "counters.json"), "--run-id", "run-a",
                   "--topology", str(tmp_path / "topology.json")])
    assert status == 1
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert metrics["partial"] is True and metrics["unexplained_loss"] is None
    assert "# PARTIAL:" in capsys.readouterr().out


def test_command_line_attributes_losses_to_failed_links(tmp_path, capsys):
    logs, traces = go_back_n_run(tmp_path)
    write_counters(tmp_path / "counters.json", "run-a", {"s3": {}})
    (tmp_path / "failures.json").write_text(json.dumps([failure(0, 5)]))
    (tmp_path / "paths.json").write_text(json.dumps({"1": PATH}))
    status = main(["--run-dir", str(tmp_path / "run"), "--sent", *map(str, logs),
                   "--pcap", *(str(t.path) for t in traces), "--counters",
                   str(tmp_path / "counters.json"), "--run-id", "run-a",
                   "--failures", str(tmp_path / "failures.json"),
                   "--flow-paths", str(tmp_path / "paths.json")])
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert status == 0, metrics["problems"]
    assert (metrics["lost_on_failed_links"], metrics["unexplained_loss"]) == (1, 0)
    assert "# transport: 7 transmissions, 1 retransmitted" in capsys.readouterr().out


def test_goodput_counts_only_delivered_frames_not_those_rc_discarded(tmp_path):
    from traffic.timing import arrivals_from_recv_logs

    log = tmp_path / "h2.recv.csv"
    log.write_text("# fabriclab receiver log v1 clock=CLOCK_REALTIME\n"
                   "flow,psn,send_ns,recv_ns,slid,coll_id,step,chunk,admitted\n"
                   f"1,0,{T0},{T0 + 1},1,0,0,0,1\n"
                   f"1,2,{T0},{T0 + 2},1,0,0,0,2\n"  # out of sequence: discarded by RC
                   f"1,1,{T0},{T0 + 3},1,0,0,0,0\n"  # dropped by the receive buffer
                   f"1,1,{T0},{T0 + 4},1,0,0,0,1\n")
    assert arrivals_from_recv_logs([log]) == {1: [T0 + 1, T0 + 4]}
