"""Run report figures drawn from a run's NIC logs, telemetry and metrics: goodput per
flow, the pause/credit stall spread, buffer peaks, completion times and the SM's reroute
timeline (definitions in traffic/report.py's docstring)."""

from __future__ import annotations

import math

import matplotlib

from traffic.arrivals import NoArrivalsError, read_arrivals
from traffic.metrics import RunMetrics
from traffic.report_model import (
    Figure,
    Note,
    ReportInputError,
    RunFiles,
    Section,
    Table,
    cell,
    fault_times,
    natural,
    plt,
    png,
    telemetry_ports,
    total,
)
from traffic.timing import goodput_timeline

GOODPUT_BIN_MS = 10.0
MAX_GOODPUT_BINS = 2000
MAX_LABELLED_FLOWS = 12


def goodput_section(run: RunFiles) -> Section:
    section = Section("Goodput per flow")
    try:
        arrivals = read_arrivals(run.run_dir / "nics")
    except NoArrivalsError as exc:
        raise ReportInputError(str(exc)) from None
    section.blocks.extend(Note(p) for p in arrivals.problems)
    if not any(arrivals.by_flow.values()):
        raise ReportInputError("the NIC receive logs hold no delivered frames")
    faults = fault_times(run.metrics)
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
    section.blocks.append(Figure("goodput", png(fig),
                                 f"{len(flows)} flow(s), {bin_ms:g} ms bins; dashed red: "
                                 f"{len(faults)} executed fault(s)"))
    return section


def stall_spread_section(run: RunFiles) -> Section:
    ports, problems = telemetry_ports(run)
    section = Section("Pause and credit stall spread", [Note(p) for p in problems])
    rows_names = sorted(ports, key=natural)
    columns = sorted({p for per in ports.values() for p in per}, key=natural)
    nics = run.metrics.nics if run.metrics else {}
    hosts = sorted((h for h, s in nics.items() if isinstance(s, dict)
                    and isinstance(s.get("flow_control"), dict)), key=natural)
    if hosts:
        columns = [*columns, "nic"]
    labels = rows_names + hosts
    grid = [[math.nan] * len(columns) for _ in labels]
    pauses = [[None] * len(columns) for _ in labels]
    detail = []
    for r, switch in enumerate(rows_names):
        for port, t in ports[switch].items():
            c = columns.index(port)
            grid[r][c] = total(t.get("blocked_ns")) / 1e6
            pauses[r][c] = total(t.get("pause_tx"))
            if grid[r][c] or pauses[r][c] or total(t.get("pause_rx")):
                for cls in range(len(t.get("class_tx") or ())):  # the program's classes
                    vals = [(t.get(k) or [0] * (cls + 1))[cls] for k in
                            ("blocked_ns", "pause_tx", "pause_rx", "credit_tx", "credit_rx")]
                    if vals[0] or vals[1] or vals[2]:
                        detail.append((switch, port, str(cls), f"{vals[0] / 1e6:.3f}",
                                       *map(str, vals[1:])))
    for i, host in enumerate(hosts):
        fc = nics[host]["flow_control"]
        r, c = len(rows_names) + i, len(columns) - 1
        grid[r][c] = total(fc.get("blocked_ns")) / 1e6
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
    section.blocks.append(Figure("stall_spread", png(fig),
                                 "grey: no such port; numbers: blocked ms and pause frames sent"))
    if detail:
        section.blocks.append(Table(("node", "port", "class", "blocked_ms", "pause_tx",
                                     "pause_rx", "credit_tx", "credit_rx"), tuple(detail)))
    else:
        section.blocks.append(Note("No port was blocked or sent a pause."))
    return section


def buffer_peak_section(run: RunFiles) -> Section:
    ports, problems = telemetry_ports(run)
    section = Section("Buffer peak per port", [Note(p) for p in problems])
    bars = [(f"{s}:{p}", list(t.get("buffer_peak") or [0]))
            for s in sorted(ports, key=natural)
            for p, t in sorted(ports[s].items(), key=lambda kv: natural(kv[0]))]
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
    section.blocks.append(Figure("buffer_peak", png(fig), "stacked by class; dotted: limits"))
    return section


def cct_section(run: RunFiles) -> Section:
    m: RunMetrics = run.need("metrics")
    collectives = m.collectives
    if not collectives:
        raise ReportInputError("this run has no collective (metrics.json has no collectives)")
    items = sorted(collectives.items(), key=lambda kv: natural(kv[0]))
    rows = tuple((cid, cell(c.ranks), cell(c.cct_ms), "yes" if c.complete else "NO")
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
    section.blocks.append(Figure("cct", png(fig), f"{len(items)} collective(s); "
                                                   f"cct_ms (max) = {cell(m.cct_ms)}"))
    return section


# (start, end, label, colour, row offset, bar height): the switch's own switchover
# above, the SM's path (report, recompute, install) below.
SM_PHASES = (("detected_ns", "switchover_ns", "fast reroute (switch)", "tab:green", -0.2, 0.25),
             ("detected_ns", "sm_received_ns", "report to SM", "tab:gray", 0.2, 0.06),
             ("sm_received_ns", "recompute_done_ns", "recompute", "tab:blue", 0.2, 0.25),
             ("recompute_done_ns", "install_done_ns", "install", "tab:purple", 0.2, 0.25))


def sm_timeline_section(run: RunFiles) -> Section:
    m: RunMetrics = run.need("metrics")
    events = list(m.sm_timeline)
    if not events:
        raise ReportInputError("no SM reroute event in this run")
    faults = fault_times(m)
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
        rows.append((f"{e.get('switch')}:{e.get('port')}", cell(e.get("link")),
                     cell((e["detected_ns"] - t0) / 1e6 if e.get("detected_ns") else None),
                     *(cell(e.get(k)) for k in ("switchover_ms", "recompute_ms", "install_ms",
                                                 "global_reroute_ms", "entries_written")),
                     cell(e.get("note", ""))))
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
    section = Section("SM reroute timeline", [Figure("sm_timeline", png(fig),
                                                     "times relative to the fault"), table])
    if m.recovery:
        section.blocks.append(Table(("flow", "gap_ms", "recovery_ms", "pre_failure_pps"),
                                    tuple((f, cell(r.gap_ms), cell(r.recovery_ms),
                                           cell(r.pre_failure_pps))
                                          for f, r in sorted(m.recovery.items()))))
    return section
