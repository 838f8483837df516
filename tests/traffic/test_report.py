"""The run and sweep reports, on synthetic run dirs written by hand in the runner's shapes."""

from __future__ import annotations

import json
import re
from pathlib import Path

from traffic.report import main, write_report, write_sweep_report

T0 = 1_796_226_029_000_000_000  # CLOCK_REALTIME ns, as in the NICs' logs
MS = 1_000_000
SECTIONS = ("Headline", "Goodput per flow", "Pause and credit stall spread",
            "Buffer peak per port", "Collective completion time", "SM reroute timeline",
            "The fabric")


def _port(tx=0, blocked_ns=0, pause_tx=0, peak=0) -> dict:
    zeros = [0] * 8
    return {"class_tx": [tx, *zeros[1:]], "class_rx": [tx, *zeros[1:]],
            "pause_tx": [pause_tx, *zeros[1:]], "pause_rx": zeros, "credit_tx": zeros,
            "credit_rx": zeros, "blocked_ns": [blocked_ns, *zeros[1:]],
            "buffer_peak": [peak, *zeros[1:]]}


def _nic(name: str, rate_kept: bool = True) -> dict:
    return {"name": name, "sent": 100, "rate_kept": rate_kept,
            "rate_reason": "" if rate_kept else "fell behind its schedule",
            "flow_control": {"blocked_ns": [2 * MS] + [0] * 7, "pauses_sent": 1,
                             "storm_pauses_sent": 0, "pauses_received": 0,
                             "credit_frames_sent": 0, "credit_frames_received": 0}}


def make_run(root: Path) -> Path:
    """Two hosts under two leaves and one spine; s1-s3 fails 50 ms in, both flows recover."""
    run = root / "20261202-150000-link-failure"
    (run / "nics").mkdir(parents=True)
    link = {"rate_pps": 2000, "buffer_pkts": 64, "delay_us": 0}
    (run / "topology.json").write_text(json.dumps({
        "name": "leafspine:2,1,1",
        "nodes": [{"name": "s1", "kind": "NodeKind.SWITCH", "tier": 0},
                  {"name": "s2", "kind": "NodeKind.SWITCH", "tier": 0},
                  {"name": "s3", "kind": "NodeKind.SWITCH", "tier": 1},
                  {"name": "h1", "kind": "NodeKind.HOST", "tier": 0},
                  {"name": "h2", "kind": "NodeKind.HOST", "tier": 0}],
        "links": [{"a": "s1", "a_port": 1, "b": "h1", "b_port": 0, "params": link},
                  {"a": "s2", "a_port": 1, "b": "h2", "b_port": 0, "params": link},
                  {"a": "s1", "a_port": 2, "b": "s3", "b_port": 1, "params": link},
                  {"a": "s2", "a_port": 2, "b": "s3", "b_port": 2, "params": link}]}))
    (run / "telemetry.json").write_text(json.dumps({
        "s1": {"1": _port(tx=90, peak=12), "2": _port(tx=40, blocked_ns=30 * MS, pause_tx=3)},
        "s2": {"1": _port(tx=90, peak=5), "2": _port(tx=50)},
        "s3": {"1": _port(tx=40, peak=30), "2": _port(tx=50)}}))
    (run / "scenario.json").write_text(json.dumps({
        "name": "link-failure", "description": "synthetic", "flow_control": "pfc",
        "link": link, "pfc": {"xoff": 16, "xon": 8}}))
    fault_ns = T0 + 50 * MS
    for host, flow, src in (("h1", 1002, 2), ("h2", 1001, 1)):
        lines = ["# fabriclab receiver log v1 clock=CLOCK_REALTIME",
                 "flow,psn,send_ns,recv_ns,slid,coll_id,step,chunk,admitted"]
        for psn in range(100):
            recv = T0 + psn * MS + (5 * MS if psn >= 50 else 0)  # a 5 ms gap at the failure
            lines.append(f"{flow},{psn},{recv - MS},{recv},{src},1,0,0,1")
        (run / "nics" / f"{host}.recv.csv").write_text("\n".join(lines) + "\n")
    (run / "metrics.json").write_text(json.dumps({
        "schema": "fabriclab.metrics/1", "scenario": "link-failure", "flow_control": "pfc",
        "topology": "leafspine:2,1,1", "sent": 200, "received": 200, "lost": 0,
        "unexplained_loss": 0, "reordered": 0, "duplicates": 0, "pause_frames": 3,
        "credit_frames": 0, "cct_ms": 105.0, "algbw": 624152.4, "busbw": 624152.4,
        "recovery_gap_ms": 5.0, "verdict": "pass", "partial": False, "problems": [],
        "rate_kept": True, "nics": {"h1": _nic("h1"), "h2": _nic("h2")},
        "flows": {"1001": {"first_rx_ns": T0, "last_rx_ns": T0 + 105 * MS},
                  "1002": {"first_rx_ns": T0, "last_rx_ns": T0 + 105 * MS}},
        "faults": [{"name": "link_down s1-eth2/s3-eth1", "at_s": 0.05, "started_ns": fault_ns,
                    "error": ""}],
        "collectives": {"1": {"cct_ms": 105.0, "complete": True, "ranks": 2},
                        "2": {"cct_ms": None, "complete": False, "ranks": 2}},
        "recovery": {"1001": {"gap_ms": 5.0, "recovery_ms": 6.0, "pre_failure_pps": 1000.0}},
        "sm_timeline": [{"event": "port_down", "switch": "s3", "port": 1, "link": "s1:2-s3:1",
                         "detected_ns": fault_ns + 1 * MS, "switchover_ns": fault_ns + 2 * MS,
                         "sm_received_ns": fault_ns + 3 * MS,
                         "recompute_done_ns": fault_ns + 4 * MS,
                         "install_done_ns": fault_ns + 9 * MS, "switchover_ms": 1.0,
                         "recompute_ms": 1.0, "install_ms": 5.0, "global_reroute_ms": 8.0}]}))
    return run


def _sections(text: str) -> list[str]:
    return re.findall(r"^## (.+)$", text, flags=re.M)


def _left_out(md: str, section: str) -> str:
    body = md.split(f"## {section}\n", 1)[1].split("\n## ", 1)[0]
    return "\n".join(line for line in body.splitlines() if line.startswith("Left out"))


def test_run_report_has_every_section_and_a_self_contained_html(tmp_path):
    md, page = write_report(make_run(tmp_path))
    text, markup = md.read_text(), page.read_text()
    assert _sections(text) == list(SECTIONS)
    assert "Left out" not in text
    assert markup.count("data:image/png;base64,") == 6  # every section but the headline
    assert not re.search(r"""(src|href)=['"]?https?://""", markup)
    assert "<script" not in markup
    assert "| recovery_gap_ms | 5 |" in text
    assert "links at 2000 packets/s" in text
    assert "yes: all 2 NICs kept their rate" in text
    assert "| s1 | 2 | 0 | 30.000 | 3 |" in text  # the blocked port, its class and pauses
    assert "624 kB/s" in text  # busbw, nccl-tests' definition, in bytes per second
    assert (md.parent / "figures" / "fabric.png").read_bytes().startswith(b"\x89PNG")


def test_missing_telemetry_leaves_out_its_sections_with_the_reason(tmp_path):
    run = make_run(tmp_path)
    (run / "telemetry.json").unlink()
    text = write_report(run)[0].read_text()
    assert _sections(text) == list(SECTIONS)
    assert "no telemetry.json" in _left_out(text, "Pause and credit stall spread")
    assert "no telemetry.json" in _left_out(text, "Buffer peak per port")
    assert "drawn without state from the switches" in text  # the fabric is still drawn
    assert "![" in text.split("## The fabric", 1)[1]


def test_corrupt_inputs_give_a_reason_line_and_the_rest_of_the_report(tmp_path):
    run = make_run(tmp_path)
    (run / "telemetry.json").write_text('{"s1": {"1": ')  # truncated mid-write
    (run / "topology.json").write_text("[1, 2]")
    with open(run / "nics" / "h1.recv.csv", "a") as f:
        f.write("1002,100,17962\n")  # a truncated last line
    md, page = write_report(run)
    text = md.read_text()
    assert "telemetry.json is not valid JSON" in _left_out(text, "Buffer peak per port")
    assert "topology.json: expected a JSON object" in _left_out(text, "The fabric")
    assert "h1.recv.csv: 1 malformed line(s) skipped" in text
    assert "Left out" not in text.split("## Goodput per flow", 1)[1].split("\n## ", 1)[0]
    assert "data:image/png;base64," in page.read_text()


def test_a_run_that_failed_early_still_gets_a_report(tmp_path):
    run = tmp_path / "20261202-150000-error"
    run.mkdir()
    (run / "metrics.json").write_text(json.dumps({"verdict": "error", "error": "NetworkError: x"}))
    text = write_report(run)[0].read_text()
    assert _sections(text) == list(SECTIONS)
    assert "The run ended with an error: NetworkError: x" in text
    assert "no NIC receive logs" in _left_out(text, "Goodput per flow")
    assert "no topology.json" in _left_out(text, "The fabric")


def test_a_stalled_nic_and_a_switch_that_could_not_answer_are_named(tmp_path):
    run = make_run(tmp_path)
    metrics = json.loads((run / "metrics.json").read_text())
    metrics["nics"]["h2"] = _nic("h2", rate_kept=False)
    (run / "metrics.json").write_text(json.dumps(metrics))
    telemetry = json.loads((run / "telemetry.json").read_text())
    telemetry["s2"] = {"error": "RpcError: unavailable"}
    (run / "telemetry.json").write_text(json.dumps(telemetry))
    text = write_report(run)[0].read_text()
    assert "NO: h2 (fell behind its schedule)" in text
    assert "telemetry of s2 unavailable: RpcError: unavailable" in text


def _sweep(root: Path, modes: list[str]) -> Path:
    sweep = root / "20261202-150000-watermark-sweep-sweep"
    rows = []
    for i, (xoff, mode) in enumerate(zip((4, 16, 48, 64), modes)):
        point = sweep / f"20261202-15000{i}-watermark-sweep"
        point.mkdir(parents=True)
        (point / "metrics.json").write_text(json.dumps({
            "flow_control": mode, "collectives": {"1": {"cct_ms": 100.0 + xoff}}}))
        rows.append({"point": f"pfc.xoff={xoff}", "run": point.name, "sent": 768,
                     "received": 768 - (xoff == 64) * 9, "lost": 9 if xoff == 64 else 0,
                     "unexplained_loss": 0, "reordered": 0, "pause_frames": 600 // xoff,
                     "credit_frames": 0, "cct_ms": 100.0 + xoff, "busbw": 1e6 / xoff,
                     "recovery_gap_ms": None, "verdict": "pass"})
    (sweep / "sweep.json").write_text(json.dumps(rows))
    return sweep


def test_sweep_report_tables_plots_and_compares_modes(tmp_path):
    md, page = write_sweep_report(_sweep(tmp_path, ["pfc", "pfc", "credit", "credit"]))
    text = md.read_text()
    assert text.startswith("# watermark-sweep (sweep)")
    assert _sections(text) == ["Points", "Metrics against the swept value", "Flow-control modes"]
    assert "| pfc.xoff=64 | 768 | 759 | 9 |" in text
    assert "| credit | 2 | 9 | 0 | 21 |" in text  # lost and pause frames summed over its points
    assert page.read_text().count("data:image/png;base64,") == 2  # metrics + CCT per mode


def test_sweep_of_one_mode_says_why_there_is_no_mode_table(tmp_path):
    text = write_sweep_report(_sweep(tmp_path, ["pfc"] * 4))[0].read_text()
    assert "Left out: every point ran the same flow-control mode." in text


def test_cli_writes_the_report_of_a_run_or_a_sweep_and_prints_the_paths(tmp_path, capsys):
    run, sweep = make_run(tmp_path), _sweep(tmp_path, ["pfc"] * 4)
    assert main([str(run), str(sweep)]) == 0
    printed = capsys.readouterr().out.split()
    assert printed == [str(run / "report.md"), str(run / "report.html"),
                       str(sweep / "report.md"), str(sweep / "report.html")]
    assert main([str(tmp_path / "nothing-here")]) == 2


def test_rc_transport_figures_are_in_the_headline_when_the_metrics_have_them(tmp_path):
    run = make_run(tmp_path)
    metrics = json.loads((run / "metrics.json").read_text())
    metrics.update({"transmissions": 210, "retransmitted": 10, "lost_in_fabric": 4,
                    "lost_on_failed_links": 4, "lost_on_failed_links_by_link": {"s1-s3": 4},
                    "ack_frames": 150, "nak_frames": 2, "victim_goodput_ratio": 0.75,
                    "victim_goodput": {"ratio": 0.75, "fault_pps": 1500.0,
                                       "baseline_pps": 2000.0, "flows": {}},
                    "suspect": False})
    (run / "metrics.json").write_text(json.dumps(metrics))
    md, page = write_report(run)
    text = md.read_text()
    for row in ("| transmissions | 210 |", "| retransmitted | 10 |", "| lost_in_fabric | 4 |",
                "| lost_on_failed_links | 4 (s1-s3: 4) |", "| ack_frames | 150 |",
                "| nak_frames | 2 |", "| suspect | no |",
                "| victim_goodput_ratio | 0.75 (1500 of 2000 frames/s without the fault) |"):
        assert row in text
    assert "<td>lost_on_failed_links</td><td>4 (s1-s3: 4)</td>" in page.read_text()


def test_null_transport_figures_show_as_dashes_and_older_metrics_show_none(tmp_path):
    run = make_run(tmp_path)
    assert "transmissions" not in write_report(run)[0].read_text()
    metrics = json.loads((run / "metrics.json").read_text())
    metrics.update({"lost_on_failed_links": None, "lost_on_failed_links_by_link": None,
                    "victim_goodput_ratio": None, "suspect": True, "transmissions": 200})
    (run / "metrics.json").write_text(json.dumps(metrics))
    text = write_report(run)[0].read_text()
    assert "| lost_on_failed_links | - |" in text and "| victim_goodput_ratio | - |" in text
    assert "| nak_frames | 0 |" in text
    assert "| suspect | **yes**: loss no counter or failed link explains |" in text


def test_goodput_leaves_out_frames_the_receiver_discarded(tmp_path):
    from traffic.arrivals import read_arrivals

    run = make_run(tmp_path)
    with open(run / "nics" / "h1.recv.csv", "a") as f:
        f.write(f"1002,7,{T0},{T0 + 200 * MS},2,1,0,0,2\n")  # an RC duplicate, discarded
        f.write(f"1002,8,{T0},{T0 + 201 * MS},2,1,0,0,0\n")  # dropped by the buffer
    assert len(read_arrivals(run / "nics").by_flow[1002]) == 100


def test_a_qos_run_reports_its_arbitration_settings_and_bmv2s_strict_priority(tmp_path):
    from traffic.metrics import ArbitrationSetting, RunMetrics

    policy = {"classes": {"gradient": 0, "checkpoint": 1},
              **{kind: {"max_vls": 2, "sl2vl": [0, 1] + [0] * 14, "high": [],
                        "low": [[0, 224], [1, 32]], "high_limit": 0} for kind in ("ca", "swe")}}
    metrics = RunMetrics(
        scenario="checkpoint-vs-allreduce", target="bmv2", flow_control="credit",
        verdict="pass", traffic_start_ns=0, solo_cct_ms=500.0, solo_run="solo/x",
        qos={"policy": policy, "schedulers": {"s1": {"scheduler": "strict_priority",
                                                     "reason": "the target has no VL "
                                                               "arbitration"}},
             "class_bandwidth": {"bin_ms": 100.0, "pps": {"gradient": [10.0, 5.0]},
                                 "bytes_per_s": {"gradient": [10000, 5000]}},
             "share_window_ns": [0, 100_000_000]},
        arbitration={"equal": ArbitrationSetting("qos/equal.conf", "equal/x", "pass", 800.0,
                                                 0.625, 0.45, 900)})
    metrics.write(tmp_path / "metrics.json")
    md, _page = write_report(tmp_path)
    text = md.read_text()
    section = text.split("## Partitions and QoS\n", 1)[1]
    assert "| switch ports | - | 0:224, 1:32 | 0 x 4 KiB | 2 |" in section
    assert "| checkpoint | 1 | 1 |" in section
    assert "s1 strict_priority" in section and "priority queues are strict" in section
    assert "| equal | qos/equal.conf | 800 | 0.625 | 0.45 | 900 | pass |" in section
    assert "class_bandwidth.png" in section


def test_a_switch_kept_from_its_cpu_makes_the_rate_not_kept(tmp_path):
    run = make_run(tmp_path)
    metrics = json.loads((run / "metrics.json").read_text())
    metrics["switch_cpu"] = {"period_ms": 50.0, "sampled_s": 3.0, "steal_max_ms": 0.0,
                             "steal_at_s": None, "starved_floor_ms": 100.0,
                             "starved": {"s2": 312.5},
                             "switches": {"s1": {"longest_starved_ms": 20.0, "at_s": 0.4,
                                                 "wait_share": 0.1},
                                          "s2": {"longest_starved_ms": 312.5, "at_s": 1.05,
                                                 "wait_share": 0.4}}}
    (run / "metrics.json").write_text(json.dumps(metrics))
    text = write_report(run)[0].read_text()
    assert "NO: switch s2 waited 312.5 ms for a CPU from 1.05 s" in text
    assert "switch s1" not in text
