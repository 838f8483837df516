"""Per-flow loss, reordering and duplicates from sender logs and receiver captures.

Definitions (DESIGN.md, "Measurements"), per flow, from PSNs:

* sent: PSNs in the flow's sender log.
* received: distinct sent PSNs captured at least once by a receiver.
* lost: sent - received.
* duplicates: captured copies of a PSN beyond its first.
* reordered: first copies that arrived after a higher PSN of the same flow had
  (late arrivals, RFC 4737's "reordered packets").
* one-way delay: capture timestamp - APP.send_ts (both CLOCK_REALTIME ns).
* unexplained_loss: lost - drops the switches counted for DATA frames (all
  reasons but not_fabric); 0 when every loss is explained, null without
  switch counters. (Negative: counters include frames of another run.)

The result is a plain dict (`metrics.json`, schema below), "partial": true when
any input could not be read completely (truncated pcap, missing or bad sender
log, frames dropped by the capture itself); "problems" says why, one line each.

    {"schema": "fabriclab.metrics/1", "sent", "received", "lost", "reordered",
     "duplicates", "unknown_frames", "pause_frames", "credit_frames",
     "capture_drops", "rate_kept", "partial", "problems": [..],
     "drops_by_reason": {reason: packets} | null, "unexplained_loss": int | null,
     "flows": {"<flow id>": {"sent", "received", "lost", "reordered", "duplicates",
                             "rx_pps", "delay_us": {"min", "mean", "max"},
                             "first_rx_ns", "last_rx_ns", "rate_kept"}}}

`format_table` prints one line per flow and a total line, with fixed columns in
the manner of nccl-tests:

    flow      sender's flow id
    sent      frames in the sender log
    recv      distinct frames captured
    lost      sent - recv
    reord     late first copies (see above)
    dups      extra copies
    rx_pps    received frames per second between first and last arrival
    dly_min / dly_avg / dly_max   one-way delay in microseconds
    rate      "ok" when the sender kept its configured rate, "LOW" when not
"""

from __future__ import annotations

import argparse
import json
import math
import os
import struct
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from traffic.capture import CaptureStats
from traffic.collectives import BUSBW_FACTOR
from traffic.frames import (
    DATA_CODEC,
    ETHER_TYPE_OFFSET,
    ETHERTYPE_FABRIC,
    ETHERTYPE_MAC_CONTROL,
    LRH_KIND_OFFSET,
    Kind,
)
from traffic.nic import read_recv_log
from traffic.pcap import PcapError, read_frames
from traffic.sender import SenderLogError, read_log

SCHEMA = "fabriclab.metrics/1"
# Drop reasons that never apply to a DATA frame, so never explain its loss.
NON_DATA_DROPS = frozenset({"not_fabric"})


@dataclass(frozen=True)
class ReceiverTrace:
    """A receiver's capture; with `dlid`, only DATA frames addressed to that LID count."""

    path: Path | str
    dlid: int | None = None


@dataclass
class _FlowState:
    sent_psns: set[int] = field(default_factory=set)
    have_log: bool = False
    rate_kept: bool | None = None
    seen: set[int] = field(default_factory=set)
    max_psn: int = -1
    reordered: int = 0
    duplicates: int = 0
    copies: int = 0
    first_rx_ns: int | None = None
    last_rx_ns: int | None = None
    delay_sum_ns: int = 0
    delay_min_ns: int | None = None
    delay_max_ns: int | None = None


def analyze(sender_logs: Iterable[Path | str],
            traces: Iterable[ReceiverTrace | Path | str],
            capture_stats: Iterable[CaptureStats] = (),
            switch_drops: Mapping[str, Mapping[tuple[int, str], tuple[int, int]]] | None = None,
            ) -> dict:
    """Metrics for one run (see the module doc for the schema and definitions).

    `switch_drops` is {switch: {(port, reason): (packets, bytes)}} as the SM's
    read_drop_counters returns it, read after the run; with it, the metrics
    say how much of the loss the switches explain.
    """
    flows: dict[int, _FlowState] = {}
    problems: list[str] = []
    for log in sender_logs:
        _load_sender_log(Path(log), flows, problems)
    counts = {"pause_frames": 0, "credit_frames": 0}
    for trace in traces:
        if not isinstance(trace, ReceiverTrace):
            trace = ReceiverTrace(trace)
        _scan_trace(trace, flows, counts, problems)
    capture_drops = 0
    for stats in capture_stats:
        capture_drops += stats.drops
        if stats.drops:
            problems.append(f"{stats.path}: the capture itself dropped {stats.drops} frames")
    metrics = _metrics(flows, counts, capture_drops, problems)
    metrics.update(_drop_accounting(metrics["lost"], switch_drops))
    return metrics


def _drop_accounting(lost: int, switch_drops) -> dict:
    """drops_by_reason and unexplained_loss (lost - data-frame drops counted by switches)."""
    if switch_drops is None:
        return {"drops_by_reason": None, "unexplained_loss": None}
    by_reason: dict[str, int] = {}
    for cells in switch_drops.values():
        for (_port, reason), (packets, _bytes) in cells.items():
            by_reason[reason] = by_reason.get(reason, 0) + packets
    explained = sum(n for reason, n in by_reason.items() if reason not in NON_DATA_DROPS)
    return {"drops_by_reason": dict(sorted(by_reason.items())),
            "unexplained_loss": lost - explained}


def _load_sender_log(path: Path, flows: dict[int, _FlowState], problems: list[str]) -> None:
    try:
        for flow, psn, _ts in read_log(path):
            state = flows.setdefault(flow, _FlowState())
            state.have_log = True
            state.sent_psns.add(psn)
    except FileNotFoundError:
        problems.append(f"{path}: sender log missing")
        return
    except SenderLogError as exc:
        problems.append(str(exc))
    summary = path.with_suffix(".summary.json")
    if path.name.endswith(".sent.csv"):  # a NIC emulator's log: NAME.sent.csv
        summary = path.with_name(path.name[:-len(".sent.csv")] + ".summary.json")
    if summary.exists():
        info = json.loads(summary.read_text())
        if "flow" in info and info["flow"] in flows:
            flows[info["flow"]].rate_kept = bool(info.get("rate_kept"))
        for flow in info.get("flows", {}) if isinstance(info.get("flows"), dict) else ():
            if int(flow) in flows:
                flows[int(flow)].rate_kept = bool(info.get("rate_kept"))


def _scan_trace(trace: ReceiverTrace, flows: dict[int, _FlowState], counts: dict[str, int],
                problems: list[str]) -> None:
    unpack = DATA_CODEC.unpack
    min_len = DATA_CODEC.size
    fabric = struct.pack("!H", ETHERTYPE_FABRIC)
    mac_control = struct.pack("!H", ETHERTYPE_MAC_CONTROL)
    data_kind, credit_kind = int(Kind.DATA), int(Kind.CREDIT)
    try:
        for ts, frame in read_frames(trace.path):
            ether_type = frame[ETHER_TYPE_OFFSET:ETHER_TYPE_OFFSET + 2]
            if ether_type == mac_control:
                counts["pause_frames"] += 1
                continue
            if ether_type != fabric or len(frame) <= LRH_KIND_OFFSET:
                continue
            kind = frame[LRH_KIND_OFFSET]
            if kind == credit_kind:
                counts["credit_frames"] += 1
                continue
            if kind != data_kind or len(frame) < min_len:
                continue
            f = unpack(frame, 0)
            if trace.dlid is not None and f.dlid != trace.dlid:
                continue
            state = flows.get(f.flow_id)
            if state is None:
                state = flows[f.flow_id] = _FlowState()
            _count_arrival(state, f.psn, ts, ts - f.send_ts)
    except FileNotFoundError:
        problems.append(f"{trace.path}: capture missing")
    except PcapError as exc:
        problems.append(f"{exc} (frames before it were counted)")


def _count_arrival(state: _FlowState, psn: int, ts: int, delay: int) -> None:
    state.copies += 1
    if psn in state.seen:
        state.duplicates += 1
        return
    state.seen.add(psn)
    if psn < state.max_psn:
        state.reordered += 1
    else:
        state.max_psn = psn
    if state.first_rx_ns is None or ts < state.first_rx_ns:
        state.first_rx_ns = ts
    if state.last_rx_ns is None or ts > state.last_rx_ns:
        state.last_rx_ns = ts
    state.delay_sum_ns += delay
    if state.delay_min_ns is None or delay < state.delay_min_ns:
        state.delay_min_ns = delay
    if state.delay_max_ns is None or delay > state.delay_max_ns:
        state.delay_max_ns = delay


def _metrics(flows: dict[int, _FlowState], counts: dict[str, int], capture_drops: int,
             problems: list[str]) -> dict:
    per_flow = {}
    totals = dict.fromkeys(("sent", "received", "lost", "reordered", "duplicates"), 0)
    for flow_id in sorted(flows):
        state = flows[flow_id]
        if not state.have_log:
            problems.append(f"flow {flow_id}: captured but no sender log; loss unknown")
            received = len(state.seen)
            sent = lost = None
        else:
            received = len(state.seen & state.sent_psns)
            sent = len(state.sent_psns)
            lost = sent - received
        detail = {
            "sent": sent, "received": received, "lost": lost,
            "reordered": state.reordered, "duplicates": state.duplicates,
            "rx_pps": _rate(len(state.seen), state.first_rx_ns, state.last_rx_ns),
            "delay_us": None if state.delay_min_ns is None else {
                "min": state.delay_min_ns / 1e3,
                "mean": state.delay_sum_ns / len(state.seen) / 1e3,
                "max": state.delay_max_ns / 1e3,
            },
            "first_rx_ns": state.first_rx_ns, "last_rx_ns": state.last_rx_ns,
            "rate_kept": state.rate_kept,
        }
        per_flow[str(flow_id)] = detail
        for key in totals:
            totals[key] += detail[key] or 0
    kept = [d["rate_kept"] for d in per_flow.values() if d["rate_kept"] is not None]
    unknown = sum(s.copies for s in flows.values() if not s.have_log)
    return {
        "schema": SCHEMA, **totals, "unknown_frames": unknown, **counts,
        "capture_drops": capture_drops,
        "rate_kept": all(kept) if kept else None,
        "partial": bool(problems),
        "problems": problems,
        "flows": per_flow,
    }


def _rate(n: int, first: int | None, last: int | None) -> float | None:
    if n < 2 or first is None or last is None or last == first:
        return None
    return (n - 1) * 1e9 / (last - first)


def write_metrics(run_dir: Path | str, metrics: dict) -> Path:
    """Write `run_dir`/metrics.json atomically (a reader never sees half a file)."""
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    path = run_dir / "metrics.json"
    tmp = run_dir / f".metrics.json.{os.getpid()}.tmp"
    tmp.write_text(json.dumps(metrics, indent=2, sort_keys=False) + "\n")
    os.replace(tmp, path)
    return path


COLUMNS = (("flow", 10), ("sent", 10), ("recv", 10), ("lost", 8), ("reord", 8), ("dups", 8),
           ("rx_pps", 10), ("dly_min", 10), ("dly_avg", 10), ("dly_max", 10), ("rate", 5))


def format_table(metrics: dict) -> str:
    """Fixed-column table, one line per flow and a total line (columns: module doc)."""
    header = "#" + "".join(f"{name:>{width}}" for name, width in COLUMNS)[1:]
    units = "#" + "".join(f"{u:>{w}}" for u, (_, w) in zip(
        ("", "(frames)", "(frames)", "", "", "", "(fps)", "(us)", "(us)", "(us)", ""),
        COLUMNS, strict=True))[1:]
    lines = [header, units]
    for flow_id, d in metrics["flows"].items():
        delay = d.get("delay_us") or {}
        lines.append(_row(flow_id, d, delay.get("min"), delay.get("mean"), delay.get("max"),
                          d.get("rx_pps"), d.get("rate_kept")))
    lines.append(_row("total", metrics, None, None, None, None, metrics.get("rate_kept")))
    if metrics.get("partial"):
        lines.append("# PARTIAL: " + "; ".join(metrics.get("problems", [])))
    return "\n".join(lines)


def _row(label, d, dmin, davg, dmax, pps, kept) -> str:
    cells = (label, d.get("sent"), d.get("received"), d.get("lost"), d.get("reordered"),
             d.get("duplicates"), pps, dmin, davg, dmax,
             None if kept is None else ("ok" if kept else "LOW"))
    return "".join(f"{_cell(v):>{w}}" for v, (_, w) in zip(cells, COLUMNS, strict=True))


def _cell(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return "-" if math.isnan(value) else f"{value:.1f}"
    return str(value)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="traffic.analysis", description=__doc__.splitlines()[0])
    ap.add_argument("--run-dir", required=True, help="writes RUN_DIR/metrics.json")
    ap.add_argument("--sent", nargs="+", default=[], help="sender logs")
    ap.add_argument("--pcap", nargs="+", default=[], help="receiver captures")
    args = ap.parse_args(argv)
    metrics = analyze(args.sent, args.pcap)
    write_metrics(args.run_dir, metrics)
    print(format_table(metrics))
    return 1 if metrics["partial"] else 0


if __name__ == "__main__":
    sys.exit(main())


# --------------------------------------------------------------------------- collectives


def collective_times(nic_summaries: Iterable[Mapping]) -> dict[str, dict]:
    """Per collective id, over all ranks' NIC summaries (traffic/nic.py).

    cct: first frame any rank sent -> last rank complete (its last receive
    delivered, or its last send for a rank that only sends); null when a rank
    did not complete.
    """
    per_coll: dict[str, list[dict]] = {}
    for summary in nic_summaries:
        for coll_id, part in summary.get("collectives", {}).items():
            per_coll.setdefault(coll_id, []).append(part)
    out = {}
    for coll_id, parts in sorted(per_coll.items(), key=lambda kv: int(kv[0])):
        starts = [p["start_ns"] for p in parts if p.get("start_ns") is not None]
        complete = all(p.get("complete") for p in parts)
        end = max(p["end_ns"] for p in parts) if complete else None
        cct_ns = end - min(starts) if complete and starts else None
        out[coll_id] = {"ranks": len(parts), "complete": complete,
                        "start_ns": min(starts) if starts else None, "end_ns": end,
                        "cct_ms": None if cct_ns is None else cct_ns / 1e6}
    return out


def bandwidth(message_bytes: int, cct_ms: float | None, algorithm: str, n: int) -> dict:
    """nccl-tests' algbw = size / time and busbw = algbw x factor (bytes/s); null without cct.

    Factors: all_reduce 2(n-1)/n, alltoall (n-1)/n, incast and permutation 1.
    """
    if not cct_ms:
        return {"algbw": None, "busbw": None}
    algbw = message_bytes / (cct_ms / 1e3)
    return {"algbw": algbw, "busbw": algbw * BUSBW_FACTOR[algorithm](n)}


# --------------------------------------------------------------------------- recovery


def recovery_gaps(arrivals: Mapping[int, Iterable[int]], failure_ns: int,
                  window_ns: int = 100_000_000, share: float = 0.9) -> dict[str, dict]:
    """Per flow, around a failure at failure_ns (CLOCK_REALTIME), from receive times (ns).

    gap_ms: last arrival before the failure -> first arrival after it.
    recovery_ms: failure -> end of the first `window_ns` window after it whose
    goodput is back to `share` of the goodput over the `window_ns` before the
    failure (null if it never is, or the flow had no goodput before).
    """
    out = {}
    for flow, times in arrivals.items():
        ts = sorted(times)
        before = [t for t in ts if t < failure_ns]
        after = [t for t in ts if t >= failure_ns]
        gap = (after[0] - before[-1]) / 1e6 if before and after else None
        pre = sum(1 for t in before if t >= failure_ns - window_ns)
        recovery = None
        if pre and after:
            target = share * pre
            j = 0
            for i, t in enumerate(after):  # sliding window ending at each arrival
                while after[j] < t - window_ns:
                    j += 1
                if i - j + 1 >= target:
                    recovery = (t - failure_ns) / 1e6
                    break
        out[str(flow)] = {"gap_ms": gap, "recovery_ms": recovery,
                          "pre_failure_pps": pre * 1e9 / window_ns}
    return out


def arrivals_from_recv_logs(paths: Iterable[Path | str]) -> dict[int, list[int]]:
    """flow -> receive times (ns) of admitted DATA frames, from NICs' NAME.recv.csv logs."""
    out: dict[int, list[int]] = {}
    for path in paths:
        for r in read_recv_log(path):
            if r.admitted:
                out.setdefault(r.flow, []).append(r.recv_ns)
    return out
