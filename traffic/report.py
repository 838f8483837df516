"""The run report and the sweep report: Markdown and self-contained HTML with plots.

`write_report(run_dir)` reads what a run left behind (metrics.json, scenario.json,
topology.json, telemetry.json, nics/*.recv.csv) and writes report.md and
report.html next to them; `write_sweep_report(sweep_dir)` does the same for a
sweep (sweep.json and one run dir per point). Every figure is optional: an input
that is missing or cannot be read leaves its section out with one line saying
why, and the rest of the report is still written. The HTML embeds its plots as
base64 PNGs (no external assets, no JavaScript); report.md links the same PNGs,
written to figures/ in the same directory.

Figures and their definitions (DESIGN.md, "Measurements"):

* headline: the metrics.json figures, algbw/busbw as nccl-tests defines them,
  and the scale (link rate in packets per second) with whether every NIC kept it.
* goodput: frames a NIC delivered (admitted 1: not dropped by its buffer nor
  discarded by RC) per flow per bin (10 ms, wider for long runs),
  as frames per second; a vertical line at each executed fault.
* stall spread: per (switch, port) the time the head of an egress queue waited
  for a pause to end or for credit (telemetry blocked_ns, summed over classes),
  with the pause frames the port sent; host NICs appear with port "nic".
* buffer peak: highest ingress buffer occupancy per (switch, port), packets.
* CCT per collective id, and the SM's reroute timeline per port-down event.
* the fabric: tiers from the topology, hosts at the bottom; a failed link red
  (dashed when it came back up), a link with a paused or blocked end orange, and
  line width by data frames carried (class_tx of both ends).

    python -m traffic.report RUN_DIR|SWEEP_DIR
"""

from __future__ import annotations

import argparse
import base64
import html
import io
import json
import math
import re
import sys
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402 - the backend must be chosen first
from matplotlib.lines import Line2D  # noqa: E402

from traffic import report_sections  # noqa: E402
from traffic.analysis import goodput_timeline  # noqa: E402
from traffic.arrivals import NoArrivalsError, read_arrivals  # noqa: E402
from traffic.metrics import MetricsSchemaError, RunMetrics  # noqa: E402

GOODPUT_BIN_MS = 10.0
MAX_GOODPUT_BINS = 2000
MAX_LABELLED_FLOWS = 12
# A port counts as stalled in the drawing when blocked longer than this share of the
# traffic window (the runner's paused_ports uses the same share), or when it sent pauses.
STALL_SHARE = 0.01
SWEEP_METRICS = ("lost", "pause_frames", "cct_ms", "busbw")
# sweep.json's columns (fabriclab/sweep.py SWEEP_COLUMNS), in its order.
SWEEP_COLUMNS = ("point", "sent", "received", "lost", "unexplained_loss", "reordered",
                 "pause_frames", "credit_frames", "cct_ms", "busbw", "recovery_gap_ms", "verdict")
HEADLINE = ("sent", "received", "lost", "unexplained_loss", "reordered", "duplicates",
            "pause_frames", "credit_frames", "cct_ms", "algbw", "busbw", "recovery_gap_ms")
# Shown for runs that counted transmissions (runs analysed before RC transport have none).
TRANSPORT_HEADLINE = ("transmissions", "retransmitted", "lost_in_fabric", "lost_on_failed_links",
                      "ack_frames", "nak_frames", "victim_goodput_ratio",
                      "recovery_gap_protected_ms", "delivery_gap_ms", "suspect")


class ReportInputError(Exception):
    """An input file of a run is missing or cannot be read; the message says which and why."""


# --------------------------------------------------------------------------- document model


@dataclass(frozen=True)
class Table:
    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class Figure:
    name: str
    png: bytes
    caption: str


@dataclass(frozen=True)
class Note:
    """A line in a section: text, or why the section's figure is missing."""

    text: str


@dataclass
class Section:
    title: str
    blocks: list[Table | Figure | Note] = field(default_factory=list)


# --------------------------------------------------------------------------- inputs


@dataclass
class RunFiles:
    """The parsed inputs of one run dir; None (and a reason) where one could not be read."""

    run_dir: Path
    metrics: RunMetrics | None = None
    scenario: dict | None = None
    topology: dict | None = None
    telemetry: dict | None = None
    why: dict[str, str] = field(default_factory=dict)

    def need(self, name: str):
        value = getattr(self, name)
        if value is None:
            raise ReportInputError(self.why.get(name, f"no {name}.json"))
        return value


def _read_json(path: Path) -> dict:
    if not path.exists():
        raise ReportInputError(f"no {path.name} in {path.parent}")
    try:
        data = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError) as exc:
        raise ReportInputError(f"{path.name} could not be read: {exc}") from None
    except json.JSONDecodeError as exc:
        raise ReportInputError(f"{path.name} is not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise ReportInputError(f"{path.name}: expected a JSON object, found {type(data).__name__}")
    return data


def load_run(run_dir: Path) -> RunFiles:
    files = RunFiles(Path(run_dir))
    try:
        files.metrics = RunMetrics.read(files.run_dir / "metrics.json")
    except MetricsSchemaError as exc:
        files.why["metrics"] = str(exc)
    for name in ("scenario", "topology", "telemetry"):
        try:
            setattr(files, name, _read_json(files.run_dir / f"{name}.json"))
        except ReportInputError as exc:
            files.why[name] = str(exc)
    return files


# --------------------------------------------------------------------------- formatting


def _cell(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def _bytes_per_s(value) -> str:
    if value is None:
        return "-"
    for unit, scale in (("GB/s", 1e9), ("MB/s", 1e6), ("kB/s", 1e3)):
        if abs(value) >= scale:
            return f"{value / scale:.3g} {unit}"
    return f"{value:.3g} B/s"


def _png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()


def _natural(name: str):
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", str(name))]


# --------------------------------------------------------------------------- run sections


def _headline(run: RunFiles) -> Section:
    m: RunMetrics = run.need("metrics")
    if m.compared_runs:  # a comparison of fabrics: the frame figures are in each run
        return Section("Headline", [Table(("metric", "value"), (
            ("verdict", f"**{m.verdict}**"),
            *((f"run on {name}", f"`{d}`") for name, d in m.compared_runs.items()))),
            *(Note(f"verdict: {reason}") for reason in m.verdict_reasons),
            *(Note(f"problem: {problem}") for problem in m.problems)])
    rows = []
    for key in HEADLINE:
        value = getattr(m, key)
        text = _bytes_per_s(value) if key in ("algbw", "busbw") and value is not None else _cell(value)
        rows.append((key, text))
    if m.transmissions:  # runs analysed before the RC transport have no transport figures
        rows += [(key, _transport_cell(m, key)) for key in TRANSPORT_HEADLINE]
    rows.append(("verdict", f"**{m.verdict}**"))
    rows.append(("scale", _scale(run)))
    rows.append(("rate kept", _rate_kept(m)))
    section = Section("Headline", [Table(("metric", "value"), tuple(rows))])
    r = m.reconciliation
    if r is not None:  # traffic/reconcile.py: every frame lost, per kind
        section.blocks.append(Table(("frame kind", "sent", "captured", "lost", "NICs took"), tuple(
            (k.kind, _cell(k.sent), _cell(k.received), _cell(k.lost), _cell(k.processed))
            for k in r.kinds)))
        section.blocks.append(Note(
            f"reconciliation: {r.lost} lost in the fabric = {r.counted_drops} counted drops + "
            f"{r.on_failed_links} on failed links + {r.held_in_fabric} held at the end + "
            f"{r.unexplained} unexplained"))
    if m.error:
        section.blocks.append(Note(f"The run ended with an error: {m.error}"))
    if m.partial:
        section.blocks.append(Note("The metrics are partial: some inputs could not be read."))
    section.blocks.extend(Note(f"verdict: {reason}") for reason in m.verdict_reasons)
    section.blocks.extend(Note(f"problem: {problem}") for problem in m.problems)
    for name, check in m.checks.items():
        section.blocks.append(Note(f"check {name}: {'ok' if check.ok else 'FAILED'} ({check})"))
    return section


def _transport_cell(m: RunMetrics, key: str) -> str:
    """A transport headline value, with its breakdown where metrics.json has one."""
    value = getattr(m, key)
    if key == "suspect":
        return "-" if value is None else ("**yes**: loss no counter or failed link explains"
                                          if value else "no")
    text = _cell(value)
    if key == "lost_on_failed_links" and m.lost_on_failed_links_by_link:
        text += " (" + ", ".join(f"{k}: {_cell(v)}"
                                 for k, v in m.lost_on_failed_links_by_link.items()) + ")"
    if key == "victim_goodput_ratio" and m.victim_goodput is not None:
        g = m.victim_goodput
        text += (f" ({_cell(g.fault_pps)} of {_cell(g.baseline_pps)} frames/s "
                 "without the fault)")
    return text


def _scale(run: RunFiles) -> str:
    rates = set()
    for link in (run.topology or {}).get("links", []):
        rate = (link.get("params") or {}).get("rate_pps")
        if rate is not None:
            rates.add(rate)
    if not rates and run.scenario:
        rate = (run.scenario.get("link") or {}).get("rate_pps")
        if rate is not None:
            rates.add(rate)
    if not rates:
        return "link rate unknown (no topology.json or scenario.json)"
    return "links at " + ", ".join(f"{r:g}" for r in sorted(rates)) + " packets/s"


def _rate_kept(m: RunMetrics) -> str:
    nics = m.nics
    if not nics:
        return _cell(m.rate_kept) + " (no NIC summaries)"
    low = [f"{name} ({s.get('rate_reason') or 'rate not kept'})"
           for name, s in sorted(nics.items(), key=lambda kv: _natural(kv[0]))
           if isinstance(s, dict) and not s.get("rate_kept", False)]
    if low:
        return "NO: " + "; ".join(low)
    capacity = m.capacity or {}
    fits = capacity.get("fits")
    switches = ("switches within host capacity" if fits else
                "switch load above host capacity" if fits is False else
                "switch capacity not assessed")
    return f"yes: all {len(nics)} NICs kept their rate; {switches}"


def _fault_label(name: str) -> str:
    """'nic /tmp/fl-nic-x/h1.ctl: stall' -> 'h1: stall'; link faults stay as named."""
    return re.sub(r"nic \S*/([^/\s]+)\.ctl", r"\1", name)


def _fault_times(m: RunMetrics | None) -> list[tuple[int, str]]:
    return [(f.started_ns, _fault_label(f.name)) for f in (m.faults if m else ())
            if f.started_ns and not f.error]


def _goodput(run: RunFiles) -> Section:
    section = Section("Goodput per flow")
    try:
        arrivals = read_arrivals(run.run_dir / "nics")
    except NoArrivalsError as exc:
        raise ReportInputError(str(exc)) from None
    section.blocks.extend(Note(p) for p in arrivals.problems)
    if not any(arrivals.by_flow.values()):
        raise ReportInputError("the NIC receive logs hold no delivered frames")
    faults = _fault_times(run.metrics)
    t0 = min(min(ts) for ts in arrivals.by_flow.values() if ts)
    t0 = min([t0, *(t for t, _ in faults)])
    t1 = max(max(ts) for ts in arrivals.by_flow.values() if ts)
    span_ms = (t1 - t0) / 1e6
    bin_ms = max(GOODPUT_BIN_MS, span_ms / MAX_GOODPUT_BINS)
    timeline = goodput_timeline(arrivals.by_flow, t0, bin_ms)
    nbins = len(next(iter(timeline.values())))
    xs = [i * bin_ms for i in range(nbins)]
    fig, ax = plt.subplots(figsize=(10, 4))
    flows = sorted(arrivals.by_flow)
    labelled = len(flows) <= MAX_LABELLED_FLOWS
    for flow in flows:
        ax.step(xs, timeline[flow], where="post", label=f"flow {flow}" if labelled else None,
                linewidth=1.2 if labelled else 0.6, alpha=1.0 if labelled else 0.5)
    if not labelled:
        ax.step(xs, [sum(column) for column in zip(*timeline.values())], where="post",
                color="black", linewidth=1.5, label=f"all {len(flows)} flows")
    for t, name in faults:
        x = (t - t0) / 1e6
        ax.axvline(x, color="red", linestyle="--", linewidth=1)
        ax.annotate(name, (x, 1), xycoords=("data", "axes fraction"), rotation=90,
                    va="top", ha="right", fontsize=7, color="red")
    ax.set_ylim(bottom=0)
    ax.set_xlabel("time since first arrival or fault (ms)")
    ax.set_ylabel(f"goodput (frames/s, {bin_ms:g} ms bins)")
    ax.set_title("Delivered frames per flow at the receivers")
    ax.legend(fontsize=7, ncol=2, loc="upper right")
    ax.grid(alpha=0.3)
    section.blocks.append(Figure("goodput", _png(fig),
                                 f"{len(flows)} flow(s), {bin_ms:g} ms bins; dashed red: "
                                 f"{len(faults)} executed fault(s)"))
    return section


def _telemetry_ports(run: RunFiles) -> tuple[dict[str, dict[str, dict]], list[str]]:
    """{switch: {port: {counter: [8 ints]}}} without switches that reported an error."""
    telemetry = run.need("telemetry")
    good, problems = {}, []
    for switch, ports in telemetry.items():
        if not isinstance(ports, dict) or "error" in ports:
            why = ports.get("error") if isinstance(ports, dict) else f"found {ports!r}"
            problems.append(f"telemetry of {switch} unavailable: {why}")
            continue
        good[switch] = {p: v for p, v in ports.items() if isinstance(v, dict)}
    if not good:
        raise ReportInputError("telemetry.json has no readable switch: " + "; ".join(problems))
    return good, problems


def _sum(values) -> int:
    return sum(v for v in values or () if isinstance(v, (int, float)))


def _stall_spread(run: RunFiles) -> Section:
    ports, problems = _telemetry_ports(run)
    section = Section("Pause and credit stall spread", [Note(p) for p in problems])
    rows_names = sorted(ports, key=_natural)
    columns = sorted({p for per in ports.values() for p in per}, key=_natural)
    nics = run.metrics.nics if run.metrics else {}
    hosts = sorted((h for h, s in nics.items() if isinstance(s, dict)
                    and isinstance(s.get("flow_control"), dict)), key=_natural)
    if hosts:
        columns = [*columns, "nic"]
    labels = rows_names + hosts
    grid = [[math.nan] * len(columns) for _ in labels]
    pauses = [[None] * len(columns) for _ in labels]
    detail = []
    for r, switch in enumerate(rows_names):
        for port, t in ports[switch].items():
            c = columns.index(port)
            grid[r][c] = _sum(t.get("blocked_ns")) / 1e6
            pauses[r][c] = _sum(t.get("pause_tx"))
            if grid[r][c] or pauses[r][c] or _sum(t.get("pause_rx")):
                for cls in range(len(t.get("class_tx") or ())):  # the program's classes
                    vals = [(t.get(k) or [0] * (cls + 1))[cls] for k in
                            ("blocked_ns", "pause_tx", "pause_rx", "credit_tx", "credit_rx")]
                    if vals[0] or vals[1] or vals[2]:
                        detail.append((switch, port, str(cls), f"{vals[0] / 1e6:.3f}",
                                       *map(str, vals[1:])))
    for i, host in enumerate(hosts):
        fc = nics[host]["flow_control"]
        r, c = len(rows_names) + i, len(columns) - 1
        grid[r][c] = _sum(fc.get("blocked_ns")) / 1e6
        pauses[r][c] = fc.get("pauses_sent", 0) + fc.get("storm_pauses_sent", 0)
        if grid[r][c] or pauses[r][c] or fc.get("pauses_received"):
            detail.append((host, "nic", "all", f"{grid[r][c]:.3f}", str(pauses[r][c]),
                           str(fc.get("pauses_received", 0)), str(fc.get("credit_frames_sent", 0)),
                           str(fc.get("credit_frames_received", 0))))
    fig, ax = plt.subplots(figsize=(1.2 + 0.9 * len(columns), 1.2 + 0.45 * len(labels)))
    vmax = max([v for row in grid for v in row if not math.isnan(v)] + [1e-3])
    cmap = matplotlib.colormaps["Oranges"].with_extremes(bad="#eeeeee")
    image = ax.imshow(grid, cmap=cmap, vmin=0, vmax=vmax, aspect="auto")
    for r in range(len(labels)):
        for c in range(len(columns)):
            if math.isnan(grid[r][c]):
                continue
            text = f"{grid[r][c]:.1f} ms" + (f"\n{pauses[r][c]} pause" if pauses[r][c] else "")
            ax.text(c, r, text, ha="center", va="center", fontsize=7,
                    color="white" if grid[r][c] > 0.6 * vmax else "black")
    ax.set_xticks(range(len(columns)), [f"port {c}" if c != "nic" else "nic" for c in columns],
                  fontsize=8)
    ax.set_yticks(range(len(labels)), labels, fontsize=8)
    fig.colorbar(image, ax=ax, label="blocked time (ms, all classes)")
    ax.set_title("Time blocked by pause or missing credit; pause frames sent")
    section.blocks.append(Figure("stall_spread", _png(fig),
                                 "grey: no such port; numbers: blocked ms and pause frames sent"))
    if detail:
        section.blocks.append(Table(("node", "port", "class", "blocked_ms", "pause_tx",
                                     "pause_rx", "credit_tx", "credit_rx"), tuple(detail)))
    else:
        section.blocks.append(Note("No port was blocked or sent a pause."))
    return section


def _buffer_peak(run: RunFiles) -> Section:
    ports, problems = _telemetry_ports(run)
    section = Section("Buffer peak per port", [Note(p) for p in problems])
    bars = [(f"{s}:{p}", list(t.get("buffer_peak") or [0]))
            for s in sorted(ports, key=_natural)
            for p, t in sorted(ports[s].items(), key=lambda kv: _natural(kv[0]))]
    classes = max((len(v) for _, v in bars), default=1)  # the program's classes
    bars = [(name, v + [0] * (classes - len(v))) for name, v in bars]
    used = [c for c in range(classes) if any(v[c] for _, v in bars)] or [0]
    fig, ax = plt.subplots(figsize=(max(6, 0.45 * len(bars)), 3.5))
    bottom = [0] * len(bars)
    for c in used:
        heights = [v[c] for _, v in bars]
        ax.bar(range(len(bars)), heights, bottom=bottom, label=f"class {c}")
        bottom = [b + h for b, h in zip(bottom, heights)]
    limits = []
    buffers = {(link.get("params") or {}).get("buffer_pkts")
               for link in (run.topology or {}).get("links", [])} - {None}
    for b in sorted(buffers):
        limits.append(("buffer", b, "black"))
    if run.metrics and run.metrics.flow_control == "pfc" and run.scenario:
        pfc = run.scenario.get("pfc") or {}
        for key, colour in (("xoff", "orange"), ("xon", "green")):
            if pfc.get(key):
                limits.append((key, pfc[key], colour))
    for name, value, colour in limits:
        ax.axhline(value, color=colour, linestyle=":", linewidth=1)
        ax.annotate(f"{name} {value}", (1, value), xycoords=("axes fraction", "data"),
                    fontsize=7, color=colour, ha="right", va="bottom")
    ax.set_xticks(range(len(bars)), [n for n, _ in bars], rotation=60, fontsize=7)
    ax.set_ylabel("peak occupancy (packets)")
    ax.set_title("Highest ingress buffer occupancy per (switch, port)")
    if len(used) > 1:
        ax.legend(fontsize=7)
    section.blocks.append(Figure("buffer_peak", _png(fig), "stacked by class; dotted: limits"))
    return section


def _cct(run: RunFiles) -> Section:
    m: RunMetrics = run.need("metrics")
    collectives = m.collectives
    if not collectives:
        raise ReportInputError("this run has no collective (metrics.json has no collectives)")
    items = sorted(collectives.items(), key=lambda kv: _natural(kv[0]))
    rows = tuple((cid, _cell(c.ranks), _cell(c.cct_ms), "yes" if c.complete else "NO")
                 for cid, c in items)
    section = Section("Collective completion time", [Table(("collective", "ranks", "cct_ms",
                                                             "complete"), rows)])
    fig, ax = plt.subplots(figsize=(max(5, 0.5 * len(items)), 3))
    values = [c.cct_ms or 0 for _, c in items]
    colours = ["tab:blue" if c.complete else "tab:red" for _, c in items]
    ax.bar(range(len(items)), values, color=colours)
    for i, (_, c) in enumerate(items):
        if not c.complete:
            ax.annotate("incomplete", (i, 0), ha="center", va="bottom", rotation=90,
                        fontsize=7, color="tab:red")
    ax.set_xticks(range(len(items)), [cid for cid, _ in items], fontsize=8)
    ax.set_xlabel("collective id")
    ax.set_ylabel("CCT (ms)")
    ax.set_title("Completion time per collective (red: did not complete)")
    section.blocks.append(Figure("cct", _png(fig), f"{len(items)} collective(s); "
                                                   f"cct_ms (max) = {_cell(m.cct_ms)}"))
    return section


# (start, end, label, colour, row offset, bar height): the switch's own switchover
# above, the SM's path (report, recompute, install) below.
SM_PHASES = (("detected_ns", "switchover_ns", "fast reroute (switch)", "tab:green", -0.2, 0.25),
             ("detected_ns", "sm_received_ns", "report to SM", "tab:gray", 0.2, 0.06),
             ("sm_received_ns", "recompute_done_ns", "recompute", "tab:blue", 0.2, 0.25),
             ("recompute_done_ns", "install_done_ns", "install", "tab:purple", 0.2, 0.25))


def _sm_timeline(run: RunFiles) -> Section:
    m: RunMetrics = run.need("metrics")
    events = list(m.sm_timeline)
    if not events:
        raise ReportInputError("no SM reroute event in this run")
    faults = _fault_times(m)
    t0 = min([t for t, name in faults if "down" in name]
             or [min(e.get("detected_ns") or math.inf for e in events)])
    rows = []
    fig, ax = plt.subplots(figsize=(9, 0.6 + 0.6 * len(events)))
    for i, e in enumerate(events):
        for start, end, label, colour, offset, height in SM_PHASES:
            if e.get(start) and e.get(end):
                ax.barh(i + offset, (e[end] - e[start]) / 1e6, left=(e[start] - t0) / 1e6,
                        height=height, color=colour, label=label)
        if e.get("detected_ns"):
            ax.plot((e["detected_ns"] - t0) / 1e6, i, "k|", markersize=14)
        rows.append((f"{e.get('switch')}:{e.get('port')}", _cell(e.get("link")),
                     _cell((e["detected_ns"] - t0) / 1e6 if e.get("detected_ns") else None),
                     *(_cell(e.get(k)) for k in ("switchover_ms", "recompute_ms", "install_ms",
                                                 "global_reroute_ms", "entries_written")),
                     _cell(e.get("note", ""))))
    ax.set_yticks(range(len(events)),
                  [f"{e.get('switch')}:{e.get('port')} {e.get('event', '')}" for e in events],
                  fontsize=8)
    ax.invert_yaxis()
    handles, labels = ax.get_legend_handles_labels()
    unique = dict(zip(labels, handles))
    ax.legend(unique.values(), unique.keys(), fontsize=7, loc="upper left",
              bbox_to_anchor=(1.01, 1))
    ax.set_xlim(left=min(0.0, ax.get_xlim()[0]))
    ax.set_xlabel("ms after the link failure" if faults else "ms after the first detection")
    ax.set_title("Reroute: detected | switchover, report, recompute, install")
    ax.grid(axis="x", alpha=0.3)
    table = Table(("port", "link", "detected_ms", "switchover_ms", "recompute_ms", "install_ms",
                   "global_reroute_ms", "entries", "note"), tuple(rows))
    section = Section("SM reroute timeline", [Figure("sm_timeline", _png(fig),
                                                     "times relative to the fault"), table])
    if m.recovery:
        section.blocks.append(Table(("flow", "gap_ms", "recovery_ms", "pre_failure_pps"),
                                    tuple((f, _cell(r.gap_ms), _cell(r.recovery_ms),
                                           _cell(r.pre_failure_pps))
                                          for f, r in sorted(m.recovery.items()))))
    return section


_INTF = re.compile(r"([A-Za-z]+\d+)-eth(\d+)")


def _link_states(m: RunMetrics | None) -> tuple[dict[frozenset, str], set[str]]:
    """Executed link faults by link ({(node, port), (node, port)} -> "down"/"restored"),
    and the nodes a node fault (stall, storm, kill) targeted."""
    states: dict[frozenset, str] = {}
    nodes: set[str] = set()
    faults = m.faults if m else ()
    for f in sorted((f for f in faults if not f.error), key=lambda f: f.started_ns or 0):
        name = f.name
        ends = frozenset((n, int(p)) for n, p in _INTF.findall(name))
        if name.startswith("link_down") and len(ends) == 2:
            states[ends] = "down"
        elif name.startswith("link_up") and len(ends) == 2 and ends in states:
            states[ends] = "restored"
        else:
            nodes.update(re.findall(r"\b([hs]\d+)\b", name.replace(".ctl", " ").replace("/", " ")))
    for e in m.sm_timeline if m else ():
        ends = frozenset((n, int(p)) for n, p in re.findall(r"([A-Za-z]+\d+):(\d+)",
                                                             e.get("link", "")))
        if len(ends) == 2:
            states.setdefault(ends, "down")
    return states, nodes


def _window_ns(m: RunMetrics | None) -> int:
    """From the first to the last arrival of any flow (0 when metrics.json does not say)."""
    flows = [f for f in (m.flows.values() if m else ()) if f.first_rx_ns and f.last_rx_ns]
    if not flows:
        return 0
    return max(f.last_rx_ns for f in flows) - min(f.first_rx_ns for f in flows)


def _fabric(run: RunFiles) -> Section:
    topo = run.need("topology")
    nodes = [n for n in topo.get("nodes", []) if isinstance(n, dict) and n.get("name")]
    links = [lk for lk in topo.get("links", []) if isinstance(lk, dict)]
    if not nodes:
        raise ReportInputError("topology.json lists no nodes")
    section = Section("The fabric")
    ports: dict[str, dict[str, dict]] = {}
    if run.telemetry is None:
        section.blocks.append(Note(f"drawn without state from the switches: {run.why.get('telemetry')}"))
    else:
        try:
            ports, problems = _telemetry_ports(run)
        except ReportInputError as exc:
            problems = [f"drawn without state from the switches: {exc}"]
        section.blocks.extend(Note(p) for p in problems)
    m = run.metrics
    states, targeted = _link_states(m)
    is_host = {n["name"]: "HOST" in str(n.get("kind", "")).upper() for n in nodes}
    switch_tiers = sorted({n.get("tier", 0) for n in nodes if not is_host[n["name"]]})
    row_of = {n["name"]: (0 if is_host[n["name"]] else 1 + switch_tiers.index(n.get("tier", 0)))
              for n in nodes}
    pos: dict[str, tuple[float, float]] = {}
    rows: dict[int, list[str]] = defaultdict(list)
    for n in sorted(nodes, key=lambda n: _natural(n["name"])):
        rows[row_of[n["name"]]].append(n["name"])
    width = max(len(r) for r in rows.values())
    for row in sorted(rows, reverse=True):
        names = rows[row]
        if row == 0:  # hosts under the switch they hang off, so links do not cross
            def under(h):
                peers = [lk["a"] if lk.get("b") == h else lk.get("b") for lk in links
                         if h in (lk.get("a"), lk.get("b"))]
                return min([pos[p][0] for p in peers if p in pos] or [0.0]), _natural(h)
            names = sorted(names, key=under)
        for i, name in enumerate(names):
            pos[name] = ((i + 0.5) * width / len(names), float(row))

    def port_state(node: str, port) -> tuple[int, float, int]:
        t = ports.get(node, {}).get(str(port), {})
        return _sum(t.get("class_tx")), _sum(t.get("blocked_ns")), _sum(t.get("pause_tx"))

    nics = m.nics if m else {}

    def host_state(node: str) -> tuple[int, float, int]:
        fc = (nics.get(node) or {}).get("flow_control") or {}
        return ((nics.get(node) or {}).get("sent", 0), _sum(fc.get("blocked_ns")),
                fc.get("pauses_sent", 0) + fc.get("storm_pauses_sent", 0))

    window = _window_ns(m)
    threshold = STALL_SHARE * window if window else 0

    loads = {}
    for lk in links:
        ends = [(lk.get("a"), lk.get("a_port")), (lk.get("b"), lk.get("b_port"))]
        loads[id(lk)] = [host_state(n) if is_host.get(n) else port_state(n, p) for n, p in ends]
    peak = max([s[0] + d[0] for s, d in loads.values()] + [1])
    fig, ax = plt.subplots(figsize=(max(6, 1.3 * width), 1.8 + 1.4 * len(rows)))
    for lk in links:
        a, b = lk.get("a"), lk.get("b")
        if a not in pos or b not in pos:
            continue
        state = states.get(frozenset({(a, lk.get("a_port")), (b, lk.get("b_port"))}))
        load_a, load_b = loads[id(lk)]
        stalled = [load[1] > threshold or load[2] > 0 for load in (load_a, load_b)]
        colour = "red" if state else "orange" if any(stalled) else "tab:gray"
        lw = 1 + 6 * (load_a[0] + load_b[0]) / peak
        (xa, ya), (xb, yb) = pos[a], pos[b]
        ax.plot([xa, xb], [ya, yb], color=colour, linewidth=lw, zorder=1,
                linestyle="--" if state == "restored" else "-")
        for node, (x, y), (ox, oy), flag, port in (
                (a, (xa, ya), (xb, yb), stalled[0], lk.get("a_port")),
                (b, (xb, yb), (xa, ya), stalled[1], lk.get("b_port"))):
            px, py = x + 0.18 * (ox - x), y + 0.18 * (oy - y)
            if flag:
                ax.plot(px, py, "o", color="orange", markersize=7, zorder=2)
            if not is_host.get(node):
                ax.text(px, py, str(port), fontsize=6, ha="center", va="center", zorder=3)
    for name, (x, y) in pos.items():
        edge = "orange" if name in targeted else "black"
        ax.scatter([x], [y], s=700 if not is_host[name] else 450,
                   marker="s" if not is_host[name] else "o",
                   color="#cfe2f3" if not is_host[name] else "#d9ead3", edgecolors=edge,
                   linewidths=3 if name in targeted else 1, zorder=4)
        ax.text(x, y, name, ha="center", va="center", fontsize=8, zorder=5)
    ax.legend(handles=[Line2D([], [], color="red", label="failed link"),
                       Line2D([], [], color="red", linestyle="--", label="failed, restored"),
                       Line2D([], [], color="orange", marker="o",
                              label=f"paused / blocked > {STALL_SHARE:.0%} end"),
                       Line2D([], [], color="tab:gray", linewidth=5,
                              label="width: data frames carried")],
              fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.02), ncol=4, frameon=False)
    ax.set_xlim(-0.3, width + 0.3)
    ax.set_ylim(-0.6, len(rows) - 0.4)
    ax.axis("off")
    ax.set_title(f"{topo.get('name', 'fabric')}: state at the end of the run")
    section.blocks.append(Figure("fabric", _png(fig),
                                 f"{len(links)} link(s), {len(states)} failed; thick-edged nodes "
                                 "were targeted by a fault"))
    return section


def _rc_transport(run: RunFiles) -> Section | None:
    """None (no section) for a run without the RC transport."""
    m = run.metrics
    line = report_sections.transport_line(m) if m is not None else None
    if line is None:
        return None
    rows = report_sections.transport_rows(m)
    blocks: list = [Note(line)]
    if rows:
        blocks.append(Table(report_sections.TRANSPORT_COLUMNS, tuple(rows)))
    return Section("RC transport", blocks)


def _training(run: RunFiles) -> Section | None:
    """None (no section) for a run without a training job."""
    m = run.metrics
    if m is None or not m.training:
        return None
    return Section("Training job", [
        Table(report_sections.TRAINING_COLUMNS,
              tuple(report_sections.training_rows(m.training))),
        *(Note(n) for n in report_sections.training_notes(m.training))])


RUN_SECTIONS: tuple[tuple[str, Callable[[RunFiles], Section | None]], ...] = (
    ("Headline", _headline), ("Training job", _training), ("RC transport", _rc_transport),
    ("Goodput per flow", _goodput),
    ("Pause and credit stall spread", _stall_spread), ("Buffer peak per port", _buffer_peak),
    ("Collective completion time", _cct), ("SM reroute timeline", _sm_timeline),
    ("The fabric", _fabric))


def _guarded(title: str, build: Callable[[], Section | None]) -> Section | None:
    """A section, or the section's title with one line saying why it is left out."""
    try:
        return build()
    except ReportInputError as exc:
        return Section(title, [Note(f"Left out: {exc}.")])
    except Exception as exc:  # noqa: BLE001 - one bad input must not cost the whole report
        plt.close("all")
        return Section(title, [Note(f"Left out: could not be drawn from this run's files "
                                    f"({type(exc).__name__}: {exc}).")])


def run_sections(run: RunFiles) -> list[Section]:
    sections = [_guarded(title, lambda b=build: b(run)) for title, build in RUN_SECTIONS]
    return [s for s in sections if s is not None]  # None: not applicable to this run


# --------------------------------------------------------------------------- rendering


def _render_markdown(title: str, intro: list[str], sections: list[Section],
                     figure_dir: Path) -> str:
    lines = [f"# {title}", ""]
    for line in intro:
        lines += [line, ""]
    for section in sections:
        lines += [f"## {section.title}", ""]
        for block in section.blocks:
            if isinstance(block, Note):
                lines += [block.text, ""]
            elif isinstance(block, Table):
                lines.append("| " + " | ".join(block.headers) + " |")
                lines.append("|" + "|".join("---" for _ in block.headers) + "|")
                lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |"
                          for row in block.rows]
                lines.append("")
            else:
                figure_dir.mkdir(exist_ok=True)
                (figure_dir / f"{block.name}.png").write_bytes(block.png)
                lines += [f"![{block.caption}]({figure_dir.name}/{block.name}.png)", "",
                          f"*{block.caption}*", ""]
    return "\n".join(lines)


CSS = """body{font-family:sans-serif;max-width:1100px;margin:2em auto;color:#222}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:2px 8px;
text-align:right;font-size:90%}th{background:#f0f0f0}td:first-child{text-align:left}
img{max-width:100%}.note{color:#666}figcaption{font-size:85%;color:#555}"""


def _inline_markup(text: str) -> str:
    escaped = html.escape(text)
    escaped = re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", escaped)
    escaped = re.sub(r"`(.+?)`", r"<code>\1</code>", escaped)
    return re.sub(r"\[([^\]]+)\]\(([^)\s]+)\)", r"<a href='\2'>\1</a>", escaped)


def _render_html(title: str, intro: list[str], sections: list[Section]) -> str:
    out = ["<!DOCTYPE html>", "<html><head><meta charset='utf-8'>",
           f"<title>{html.escape(title)}</title><style>{CSS}</style></head><body>",
           f"<h1>{html.escape(title)}</h1>"]
    out += [f"<p>{_inline_markup(line)}</p>" for line in intro if line]
    for section in sections:
        out.append(f"<h2>{html.escape(section.title)}</h2>")
        for block in section.blocks:
            if isinstance(block, Note):
                out.append(f"<p class='note'>{_inline_markup(block.text)}</p>")
            elif isinstance(block, Table):
                out.append("<table><tr>" + "".join(f"<th>{html.escape(h)}</th>"
                                                   for h in block.headers) + "</tr>")
                out += ["<tr>" + "".join(f"<td>{_inline_markup(c)}</td>" for c in row) + "</tr>"
                        for row in block.rows]
                out.append("</table>")
            else:
                data = base64.b64encode(block.png).decode()
                out.append(f"<figure><img alt='{html.escape(block.caption)}' "
                           f"src='data:image/png;base64,{data}'><figcaption>"
                           f"{html.escape(block.caption)}</figcaption></figure>")
    out.append("</body></html>")
    return "\n".join(out)


def _write(directory: Path, title: str, intro: list[str],
           sections: list[Section]) -> tuple[Path, Path]:
    md, page = directory / "report.md", directory / "report.html"
    md.write_text(_render_markdown(title, intro, sections, directory / "figures"))
    page.write_text(_render_html(title, intro, sections))
    return md, page


def _run_intro(run: RunFiles) -> list[str]:
    m, s = run.metrics or RunMetrics(), run.scenario or {}
    lines = []
    if s.get("description"):
        lines.append(s["description"])
    facts = [f"{k}: `{v}`" for k, v in (("topology", m.topology or s.get("topology")),
                                        ("flow control", m.flow_control
                                         or s.get("flow_control")),
                                        ("routing", m.routing or s.get("routing")),
                                        ("reroute", m.reroute or s.get("reroute")),
                                        ("target", m.target)) if v]
    if facts:
        lines.append(", ".join(facts))
    lines.append(f"run directory: `{run.run_dir.name}`")
    lines.extend(_live_view_line(run.run_dir))
    return lines


def _live_view_line(run_dir: Path) -> list[str]:
    """The link to the run's live view, replayed from its recording (docs/liveview.md)."""
    if (run_dir / "liveview" / "index.html").exists():
        line = "live view, replayed from the run's recording: " \
               "[liveview/index.html](liveview/index.html)"
        if (run_dir / "liveview.png").exists():
            line += " (a browser's screenshot during the run: [liveview.png](liveview.png))"
        return [line]
    if (run_dir / "liveview.jsonl").exists():
        return ["live view recorded (`liveview.jsonl`) but not replayable here: "
                f"`fabriclab report {run_dir}` says why"]
    return []


def write_report(run_dir: Path) -> tuple[Path, Path]:
    """Write report.md and report.html for one run dir; returns their paths.

    Never raises for a run's inputs: what cannot be read is named in the report."""
    run = load_run(Path(run_dir))
    title = (run.metrics.scenario if run.metrics else "") or (run.scenario or {}).get("name") \
        or run.run_dir.name
    return _write(run.run_dir, str(title), _run_intro(run), run_sections(run))


# --------------------------------------------------------------------------- sweeps


def _swept_value(label: str):
    """'pfc.xoff=16' -> ('pfc.xoff', 16.0); non-numeric values stay strings."""
    parameter, _, value = str(label).partition("=")
    try:
        return parameter, float(value)
    except ValueError:
        return parameter, value or label


def _point_metrics(sweep_dir: Path, row: dict) -> tuple[RunMetrics, str | None]:
    try:
        return RunMetrics.read(sweep_dir / str(row.get("run")) / "metrics.json"), None
    except MetricsSchemaError as exc:
        return RunMetrics(), f"point {row.get('point')}: {exc}"


def _sweep_rows(sweep_dir: Path) -> list[dict]:
    path = sweep_dir / "sweep.json"
    if not path.exists():
        raise ReportInputError(f"no sweep.json in {sweep_dir}")
    try:
        rows = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ReportInputError(f"sweep.json could not be read ({exc})") from None
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise ReportInputError("sweep.json: expected a list of point objects")
    return rows


def _sweep_points(sweep_dir: Path, rows: list[dict]) -> Section:
    extra = [k for k in dict.fromkeys(k for r in rows for k in r)
             if k not in SWEEP_COLUMNS and k != "run"]
    columns = (*SWEEP_COLUMNS, *extra, "run")
    section = Section("Points", [Table(columns, tuple(tuple(
        _cell(r.get(c)) for c in columns) for r in rows))])
    for row in rows:
        metrics, problem = _point_metrics(sweep_dir, row)
        if problem or metrics.error:
            section.blocks.append(Note(f"point {row.get('point')}: {problem or metrics.error}"))
    links = [f"[{r.get('point')}]({r.get('run')}/report.html)" for r in rows
             if (sweep_dir / str(r.get("run")) / "report.html").exists()]
    if links:
        section.blocks.append(Note("per-point reports: " + ", ".join(links)))
    return section


def _sweep_plot(rows: list[dict]) -> Section:
    parameter = _swept_value(rows[0].get("point", ""))[0] or "point"
    xs = [_swept_value(r.get("point", ""))[1] for r in rows]
    numeric = all(isinstance(x, float) for x in xs)
    fig, axes = plt.subplots(1, len(SWEEP_METRICS), figsize=(3.2 * len(SWEEP_METRICS), 3))
    for ax, metric in zip(axes, SWEEP_METRICS):
        ys = [r.get(metric) for r in rows]
        pts = [(x if numeric else i, y) for i, (x, y) in enumerate(zip(xs, ys)) if y is not None]
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-")
            ax.set_ylim(bottom=min(0, *(p[1] for p in pts)))
        else:
            ax.text(0.5, 0.5, "no value", transform=ax.transAxes, ha="center", color="gray")
        if not numeric:
            ax.set_xticks(range(len(xs)), [str(x) for x in xs], rotation=45, fontsize=7)
        ax.set_title(metric + (" (B/s)" if metric == "busbw" else ""), fontsize=9)
        ax.set_xlabel(parameter, fontsize=8)
        ax.grid(alpha=0.3)
    fig.tight_layout()
    return Section("Metrics against the swept value",
                   [Figure("sweep", _png(fig), f"{', '.join(SWEEP_METRICS)} against {parameter}")])


def _mode_comparison(sweep_dir: Path, rows: list[dict]) -> Section:
    section = Section("Flow-control modes")
    by_mode: dict[str, list[tuple[dict, dict]]] = defaultdict(list)
    for row in rows:
        metrics, problem = _point_metrics(sweep_dir, row)
        if problem:
            section.blocks.append(Note(problem))
        mode = row.get("flow_control") or metrics.flow_control
        if mode:
            by_mode[str(mode)].append((row, metrics))
    if len(by_mode) < 2:
        raise ReportInputError("every point ran the same flow-control mode"
                               if by_mode else "no point says which flow-control mode it ran")

    def values(pairs, key):
        return [r.get(key) for r, _ in pairs if r.get(key) is not None]

    table = []
    for mode, pairs in sorted(by_mode.items()):
        cct = values(pairs, "cct_ms")
        table.append((mode, str(len(pairs)), _cell(sum(values(pairs, "lost")) or 0),
                      _cell(sum(values(pairs, "unexplained_loss")) or 0),
                      _cell(sum(values(pairs, "pause_frames")) or 0),
                      _cell(sum(values(pairs, "credit_frames")) or 0),
                      _cell(sorted(cct)[len(cct) // 2] if cct else None),
                      _cell(max(values(pairs, "busbw"), default=None)),
                      ", ".join(sorted({str(r.get("verdict")) for r, _ in pairs}))))
    section.blocks.append(Table(("mode", "points", "lost", "unexplained_loss", "pause_frames",
                                 "credit_frames", "median cct_ms", "max busbw", "verdicts"),
                                tuple(table)))
    dist = {mode: [c.cct_ms for _, m in pairs for c in (m.collectives or {}).values()
                   if c.cct_ms is not None]
            for mode, pairs in sorted(by_mode.items())}
    if any(dist.values()):
        fig, ax = plt.subplots(figsize=(1.5 + 1.5 * len(dist), 3))
        ax.boxplot([v or [math.nan] for v in dist.values()])
        ax.set_xticks(range(1, len(dist) + 1), list(dist))
        ax.set_ylabel("CCT per collective (ms)")
        ax.set_title("CCT distribution per mode")
        section.blocks.append(Figure("cct_by_mode", _png(fig),
                                     "every completed collective of every point"))
    else:
        section.blocks.append(Note("No completed collective, so no CCT distribution per mode."))
    return section


def write_sweep_report(sweep_dir: Path) -> tuple[Path, Path]:
    """Write report.md and report.html for a sweep dir (sweep.json + one run dir per point)."""
    sweep_dir = Path(sweep_dir)
    try:
        rows = _sweep_rows(sweep_dir)
    except ReportInputError as exc:
        sections = [Section("Points", [Note(f"Left out: {exc}.")])]
    else:
        if not rows:
            sections = [Section("Points", [Note("Left out: sweep.json lists no point.")])]
        else:
            sections = [_guarded("Points", lambda: _sweep_points(sweep_dir, rows)),
                        _guarded("Metrics against the swept value", lambda: _sweep_plot(rows)),
                        _guarded("Flow-control modes", lambda: _mode_comparison(sweep_dir, rows))]
    intro = [f"sweep directory: `{sweep_dir.name}`"]
    name = re.sub(r"^\d{8}-\d{6}-", "", sweep_dir.name).removesuffix("-sweep")
    return _write(sweep_dir, f"{name} (sweep)", intro, sections)


def write(directory: Path) -> tuple[Path, Path]:
    """The sweep report for a sweep dir (it holds sweep.json), the run report otherwise."""
    directory = Path(directory)
    if (directory / "sweep.json").exists():
        return write_sweep_report(directory)
    return write_report(directory)


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m traffic.report", description=__doc__.split(
        "\n")[0])
    parser.add_argument("dirs", nargs="+", type=Path, metavar="RUN_DIR|SWEEP_DIR")
    args = parser.parse_args(None if argv is None else list(argv))
    status = 0
    for directory in args.dirs:
        if not directory.is_dir():
            print(f"error: {directory} is not a directory", file=sys.stderr)
            status = 2
            continue
        for path in write(directory):
            print(path)
    return status


if __name__ == "__main__":
    sys.exit(main())
