"""Per-flow loss, retransmission, reordering and duplicates from sender logs and receiver captures.

Definitions (DESIGN.md, "Measurements"), per flow, from PSNs:

* sent: distinct PSNs in the flow's sender log.
* transmissions: rows of the sender log (a retransmitted frame repeats its
  (flow, psn) with a later send_ns).
* retransmitted: transmissions - sent.
* received: distinct sent PSNs captured at least once by a receiver.
* lost: sent - received (PSNs of which no copy, retransmissions included, was
  captured).
* lost_in_fabric: transmissions no receiver captured, matched exactly on
  (flow, psn, send_ts): the capture's APP.send_ts is the sender log's send_ns
  of that transmission. A frame lost in the network counts even when its
  retransmission got through. (A copy whose send_ts is in no log row is paired
  with the PSN's unmatched transmissions in send order.)
* duplicates: captured copies of a PSN beyond its first.
* reordered: first copies that arrived after a higher PSN of the same flow had
  (late arrivals, RFC 4737's "reordered packets").
* one-way delay: capture timestamp - APP.send_ts (both CLOCK_REALTIME ns).
* lost_on_failed_links: transmissions that never arrived whose flow crosses
  a failed link and whose send_ns lies in the failure window
  widened by a slack (`attribute_link_losses`); null without failures.
* unexplained_loss: lost_in_fabric - drops the switches counted for DATA frames
  (all reasons but not_fabric) - lost_on_failed_links (at most what the
  counters left unexplained: a counted drop inside a failure window is
  explained once, by its counter); 0 when every loss is
  explained, null without (usable) switch counters. Above 0 the run is
  `suspect`. Negative: something was explained twice (a switch counted a drop
  of an RC ACK frame, which is DATA-kind but no transmission of a flow, or a
  drop inside a failure window) or the counters include another run's frames.

RC transport control: DATA-kind frames with BTH opcode OPCODE_RC_ACK are ACKs
and NAKs, never data: they are counted in ack_frames (AETH-style syndrome
bits 6:5 = 00) and nak_frames (any other syndrome, e.g. 0x60 PSN sequence
error) and belong to no flow.

The result is a plain dict (`metrics.json`, schema below), "partial": true when
any input could not be read completely or could not be trusted (truncated
pcap, missing or bad sender log, frames dropped by the capture itself, switch
counters of another run or fabric); "problems" says why, one line each, and
also holds the line saying why a run is suspect (that alone is not partial).

    {"schema": "fabriclab.metrics/1", "sent", "received", "lost", "reordered",
     "duplicates", "transmissions", "retransmitted", "lost_in_fabric",
     "unknown_frames", "pause_frames", "credit_frames", "ack_frames", "nak_frames",
     "capture_drops", "rate_kept", "partial", "problems": [..],
     "drops_by_reason": {reason: packets} | null, "unexplained_loss": int | null,
     "suspect": bool | null,
     "lost_on_failed_links": int | null, "lost_on_failed_links_by_link": {link: n} | null,
     "victim_goodput_ratio": float | null  (filled by the runner, see victim_goodput),
     "flows": {"<flow id>": {"sent", "received", "lost", "reordered", "duplicates",
                             "transmissions", "retransmitted", "lost_in_fabric",
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

and, for a run with RC transport activity or link failures, one "# transport:"
line with the transmission, retransmission, ACK/NAK and failed-link figures.
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
from traffic.frames import (
    DATA_CODEC,
    ETHER_TYPE_OFFSET,
    ETHERTYPE_FABRIC,
    ETHERTYPE_MAC_CONTROL,
    LRH_KIND_OFFSET,
    OPCODE_RC_ACK,
    Kind,
)
from traffic.pcap import PcapError, read_frames
from traffic.result_table import format_table
from traffic.sender import SenderLogError, read_log
from traffic.switch_counters import usable_counters

SCHEMA = "fabriclab.metrics/1"
# Drop reasons that never apply to a DATA frame, so never explain its loss.
NON_DATA_DROPS = frozenset({"not_fabric"})
# RC transport (InfiniBand RC style): the syndrome (APP.chunk) of an OPCODE_RC_ACK frame.
NAK_SYNDROME_BITS = 0x60  # AETH syndrome bits 6:5: 00 ACK, 01 RNR NAK, 11 NAK
# Frames of a failed link still in its delay line or its switch's egress queue
# when it went down (or already queued there before the reroute took effect).
FAILURE_SLACK_NS = 50_000_000


@dataclass(frozen=True)
class ReceiverTrace:
    """A receiver's capture; with `dlid`, only DATA frames addressed to that LID count."""

    path: Path | str
    dlid: int | None = None


@dataclass
class _FlowState:
    tx: dict[int, list[int]] = field(default_factory=dict)  # psn -> send_ns of each transmission
    have_log: bool = False
    rate_kept: bool | None = None
    rx: dict[int, dict[int, int]] = field(default_factory=dict)  # psn -> {send_ts: copies}
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

    @property
    def transmissions(self) -> int:
        return sum(len(times) for times in self.tx.values())

    def unarrived(self) -> list[tuple[int, int]]:
        """(psn, send_ns) of every transmission no receiver captured."""
        out = []
        for psn, times in self.tx.items():
            copies = self.rx.get(psn, {})
            logged = set(times)
            stray = sum(n for ts, n in copies.items() if ts not in logged)
            for ts in sorted(times):
                if ts in copies:
                    continue
                if stray:  # a copy whose send_ts no log row has: paired in send order
                    stray -= 1
                    continue
                out.append((psn, ts))
        return out



def analyze(sender_logs: Iterable[Path | str],
            traces: Iterable[ReceiverTrace | Path | str],
            capture_stats: Iterable[CaptureStats] = (),
            switch_drops: Mapping | Path | str | None = None,
            *,
            run_id: str | None = None,
            topology: Mapping | None = None,
            failures: Iterable[Mapping] | None = None,
            flow_paths: Mapping[int | str, Iterable[str]] | None = None,
            failure_slack_ns: int = FAILURE_SLACK_NS,
            ) -> dict:
    """Metrics for one run (see the module doc for the schema and definitions).

    `switch_drops`: the switches' drop counters read after the run, either the
    SM's {switch: {(port, reason): (packets, bytes)}} (read_drop_counters per
    switch), or counters.json as loaded or its path ({switch: {"portN/reason":
    {"packets", "bytes"}}}, optionally with "run_id"). With them the metrics say
    how much of the loss the switches explain.

    `run_id`: the run these inputs belong to. Counters that carry another
    "run_id", or (with `topology`) name a switch or port the topology does not
    have, are ignored with a problem line: the metrics are partial and
    unexplained_loss is null. Counters without a "run_id" are taken as they are.

    `topology`: {switch: wired port numbers}, or topology.json as loaded
    (see `topology_ports`).

    `failures` and `flow_paths`: link failures and the links each flow crosses,
    as `attribute_link_losses` takes them (with `failure_slack_ns`); they fill
    lost_on_failed_links. Failures without flow paths are a problem line.
    """
    problems: list[str] = []
    flows, counts = _load_flows(sender_logs, traces, problems)
    capture_drops = 0
    for stats in capture_stats:
        capture_drops += stats.drops
        if stats.drops:
            problems.append(f"{stats.path}: the capture itself dropped {stats.drops} frames")
    failures = list(failures or ())
    on_links = None
    if failures:
        if not isinstance(flow_paths, Mapping):
            problems.append(f"{len(failures)} link failure(s) given without flow paths "
                            f"({{flow: [links]}}, found {type(flow_paths).__name__}): "
                            "losses not attributed to them")
        else:
            on_links = _attribute(_unarrived_by_flow(flows), failures, flow_paths,
                                  failure_slack_ns, problems)
    drops = usable_counters(switch_drops, run_id, topology, problems)
    metrics = _metrics(flows, counts, capture_drops, problems)
    metrics["lost_on_failed_links"] = None if on_links is None else on_links["total"]
    metrics["lost_on_failed_links_by_link"] = None if on_links is None else on_links["by_link"]
    metrics.update(_drop_accounting(metrics["lost_in_fabric"], metrics["lost_on_failed_links"],
                                    drops))
    if metrics["suspect"]:
        problems.append(f"suspect: {metrics['unexplained_loss']} transmission(s) lost in the "
                        "fabric are explained by no switch drop counter and no failed link")
    metrics["victim_goodput_ratio"] = None
    return metrics


def _load_flows(sender_logs, traces, problems: list[str]
                ) -> tuple[dict[int, _FlowState], dict[str, int]]:
    """Per-flow state from sender logs and captures, and the non-data frame counts."""
    flows: dict[int, _FlowState] = {}
    for log in sender_logs:
        _load_sender_log(Path(log), flows, problems)
    counts = {"pause_frames": 0, "credit_frames": 0, "ack_frames": 0, "nak_frames": 0}
    for trace in traces:
        if not isinstance(trace, ReceiverTrace):
            trace = ReceiverTrace(trace)
        _scan_trace(trace, flows, counts, problems)
    return flows, counts


def _unarrived_by_flow(flows: Mapping[int, _FlowState]) -> dict[int, list[tuple[int, int]]]:
    return {flow: state.unarrived() for flow, state in flows.items() if state.have_log}


def _drop_accounting(lost_in_fabric: int, on_failed_links: int | None, switch_drops) -> dict:
    """drops_by_reason, unexplained_loss and suspect (module doc)."""
    if switch_drops is None:
        return {"drops_by_reason": None, "unexplained_loss": None, "suspect": None}
    by_reason: dict[str, int] = {}
    for cells in switch_drops.values():
        for (_port, reason), (packets, _bytes) in cells.items():
            by_reason[reason] = by_reason.get(reason, 0) + packets
    explained = sum(n for reason, n in by_reason.items() if reason not in NON_DATA_DROPS)
    # A frame a switch counted (no_route while routes change, say) may also lie in a
    # failure's window: the counters come first, the failed link explains the rest.
    unexplained = lost_in_fabric - explained - min(on_failed_links or 0,
                                                   max(0, lost_in_fabric - explained))
    return {"drops_by_reason": dict(sorted(by_reason.items())),
            "unexplained_loss": unexplained, "suspect": unexplained > 0}


# --------------------------------------------------------------------------- inputs


def _load_sender_log(path: Path, flows: dict[int, _FlowState], problems: list[str]) -> None:
    try:
        for flow, psn, ts in read_log(path):
            state = flows.setdefault(flow, _FlowState())
            state.have_log = True
            state.tx.setdefault(psn, []).append(ts)
    except FileNotFoundError:
        problems.append(f"{path}: sender log missing")
        return
    except (OSError, UnicodeDecodeError) as exc:
        problems.append(f"{path}: sender log could not be read ({exc})")
        return
    except SenderLogError as exc:
        problems.append(str(exc))
    summary = path.with_suffix(".summary.json")
    if path.name.endswith(".sent.csv"):  # a NIC emulator's log: NAME.sent.csv
        summary = path.with_name(path.name[:-len(".sent.csv")] + ".summary.json")
    if not summary.exists():
        return
    try:
        info = json.loads(summary.read_text())
        if not isinstance(info, dict):
            raise ValueError(f"expected an object, found {type(info).__name__}")
        if "flow" in info and info["flow"] in flows:
            flows[info["flow"]].rate_kept = bool(info.get("rate_kept"))
        for flow in info.get("flows", {}) if isinstance(info.get("flows"), dict) else ():
            if int(flow) in flows:
                flows[int(flow)].rate_kept = bool(info.get("rate_kept"))
    except (OSError, UnicodeDecodeError, ValueError, TypeError) as exc:
        problems.append(f"{summary}: sender summary could not be read ({exc}); rate unknown")


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
            if f.opcode == OPCODE_RC_ACK:  # transport control; chunk carries the syndrome
                counts["nak_frames" if f.chunk & NAK_SYNDROME_BITS else "ack_frames"] += 1
                continue
            state = flows.get(f.flow_id)
            if state is None:
                state = flows[f.flow_id] = _FlowState()
            copies = state.rx.setdefault(f.psn, {})
            copies[f.send_ts] = copies.get(f.send_ts, 0) + 1
            _count_arrival(state, f.psn, ts, ts - f.send_ts)
    except FileNotFoundError:
        problems.append(f"{trace.path}: capture missing")
    except PcapError as exc:
        problems.append(f"{exc} (frames before it were counted)")
    except OSError as exc:
        problems.append(f"{trace.path}: capture could not be read ({exc})")


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


FLOW_COUNTS = ("sent", "received", "lost", "reordered", "duplicates", "transmissions",
               "retransmitted", "lost_in_fabric")


def _metrics(flows: dict[int, _FlowState], counts: dict[str, int], capture_drops: int,
             problems: list[str]) -> dict:
    per_flow = {}
    totals = dict.fromkeys(FLOW_COUNTS, 0)
    for flow_id in sorted(flows):
        state = flows[flow_id]
        if not state.have_log:
            problems.append(f"flow {flow_id}: captured but no sender log; loss unknown")
            received = len(state.seen)
            sent = lost = transmissions = retransmitted = lost_in_fabric = None
        else:
            received = len(state.seen & state.tx.keys())
            sent = len(state.tx)
            lost = sent - received
            transmissions = state.transmissions
            retransmitted = transmissions - sent
            lost_in_fabric = len(state.unarrived())
        detail = {
            "sent": sent, "received": received, "lost": lost,
            "reordered": state.reordered, "duplicates": state.duplicates,
            "transmissions": transmissions, "retransmitted": retransmitted,
            "lost_in_fabric": lost_in_fabric,
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


# --------------------------------------------------------------------------- failed links


def attribute_link_losses(sender_logs: Iterable[Path | str],
                          traces: Iterable[ReceiverTrace | Path | str],
                          failures: Iterable[Mapping],
                          flow_paths: Mapping[int | str, Iterable[str]],
                          slack_ns: int = FAILURE_SLACK_NS) -> dict:
    """Transmissions lost on failed links: {"total", "by_link", "by_flow", "problems"}.

    `failures`: [{"link": "s1-s3", "down_ns": int, "restored_ns": int | None}],
    CLOCK_REALTIME ns; restored_ns is when the data plane stopped using the
    link (local switchover or global reroute written, whichever came first),
    None = until the end. `flow_paths`: {flow id: link names the flow's frames
    cross}. Link names are "a-b" in either order ("s1:2-s3:1" works too).

    A transmission that no receiver captured (matched on (flow, psn, send_ts),
    see the module doc) whose flow crosses a failed link and whose send_ns lies
    in [down_ns - slack_ns, restored_ns + slack_ns] is attributed to that link;
    to the first such failure listed when several match, so `total` counts each
    transmission once. `slack_ns` (default 50 ms) covers frames already in the
    link's delay line or its switch's egress queue when it went down. by_link
    has every failed link, 0 when it cost nothing.
    """
    problems: list[str] = []
    flows, _counts = _load_flows(sender_logs, traces, problems)
    result = _attribute(_unarrived_by_flow(flows), list(failures), flow_paths, slack_ns,
                        problems)
    return {**result, "problems": problems}


def _link_key(name: str) -> frozenset[str]:
    return frozenset(end.split(":")[0].strip() for end in str(name).split("-"))


def _attribute(unarrived: Mapping[int, list[tuple[int, int]]], failures: list[Mapping],
               flow_paths: Mapping, slack_ns: int, problems: list[str]) -> dict:
    windows = []
    for f in failures:
        try:
            restored = f.get("restored_ns")
            windows.append((str(f["link"]), _link_key(f["link"]), int(f["down_ns"]) - slack_ns,
                            math.inf if restored is None else int(restored) + slack_ns))
        except (KeyError, TypeError, ValueError, AttributeError):
            problems.append(f"failure {f!r}: expected {{'link', 'down_ns', 'restored_ns'}}; "
                            "ignored")
    paths = {}
    for flow, links in flow_paths.items():
        try:
            paths[int(flow)] = {_link_key(link) for link in links}
        except (TypeError, ValueError):
            problems.append(f"flow path {flow!r}: {links!r} is not a flow id and link names; "
                            "ignored")
    by_link = {link: 0 for link, *_ in windows}
    by_flow: dict[str, int] = {}
    for flow, lost in unarrived.items():
        crossing = [w for w in windows if w[1] in paths.get(flow, ())]
        for _psn, send_ns in lost if crossing else ():
            for link, _key, low, high in crossing:
                if low <= send_ns <= high:
                    by_link[link] += 1
                    by_flow[str(flow)] = by_flow.get(str(flow), 0) + 1
                    break
    return {"total": sum(by_link.values()), "by_link": by_link, "by_flow": by_flow}


def write_metrics(run_dir: Path | str, metrics: dict) -> Path:
    """Write `run_dir`/metrics.json atomically (a reader never sees half a file)."""
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    path = run_dir / "metrics.json"
    tmp = run_dir / f".metrics.json.{os.getpid()}.tmp"
    tmp.write_text(json.dumps(metrics, indent=2, sort_keys=False) + "\n")
    os.replace(tmp, path)
    return path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="traffic.analysis", description=__doc__.splitlines()[0])
    ap.add_argument("--run-dir", required=True, help="writes RUN_DIR/metrics.json")
    ap.add_argument("--sent", nargs="+", default=[], help="sender logs")
    ap.add_argument("--pcap", nargs="+", default=[], help="receiver captures")
    ap.add_argument("--counters", help="the switches' drop counters (counters.json)")
    ap.add_argument("--run-id", help="the run the inputs belong to: counters of another "
                                     "run are ignored")
    ap.add_argument("--topology", help="topology.json: counters naming a switch or port it "
                                       "does not have are ignored")
    ap.add_argument("--failures", help='JSON list of {"link", "down_ns", "restored_ns"}')
    ap.add_argument("--flow-paths", help='JSON {flow id: [link names]} (with --failures)')
    ap.add_argument("--failure-slack-ms", type=float, default=FAILURE_SLACK_NS / 1e6,
                    help="widening of each failure window (default %(default)g ms)")
    args = ap.parse_args(argv)
    inputs = {}
    for name in ("topology", "failures", "flow_paths"):
        path = getattr(args, name)
        if path is None:
            continue
        try:
            inputs[name] = json.loads(Path(path).read_text())
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            print(f"traffic.analysis: error: {path}: could not be read ({exc})", file=sys.stderr)
            return 2
    metrics = analyze(args.sent, args.pcap, switch_drops=args.counters, run_id=args.run_id,
                      failure_slack_ns=int(args.failure_slack_ms * 1e6), **inputs)
    write_metrics(args.run_dir, metrics)
    print(format_table(metrics))
    return 1 if metrics["partial"] or metrics["suspect"] else 0


if __name__ == "__main__":
    sys.exit(main())
