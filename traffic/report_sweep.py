"""The sweep report: one row per point of sweep.json, the metrics against the swept value,
and a comparison of flow-control modes when the points ran several."""

from __future__ import annotations

import json
import math
import re
from collections import defaultdict
from pathlib import Path

from traffic.metrics import MetricsSchemaError, RunMetrics
from traffic.report_model import (
    Figure,
    Note,
    ReportInputError,
    Section,
    Table,
    cell,
    guarded,
    plt,
    png,
)
from traffic.report_render import write_document

SWEEP_METRICS = ("lost", "pause_frames", "cct_ms", "busbw")
# sweep.json's columns (fabriclab/sweep.py SWEEP_COLUMNS), in its order.
SWEEP_COLUMNS = ("point", "sent", "received", "lost", "unexplained_loss", "reordered",
                 "pause_frames", "credit_frames", "cct_ms", "busbw", "recovery_gap_ms", "verdict")


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
        cell(r.get(c)) for c in columns) for r in rows))])
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
                   [Figure("sweep", png(fig), f"{', '.join(SWEEP_METRICS)} against {parameter}")])


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
        table.append((mode, str(len(pairs)), cell(sum(values(pairs, "lost")) or 0),
                      cell(sum(values(pairs, "unexplained_loss")) or 0),
                      cell(sum(values(pairs, "pause_frames")) or 0),
                      cell(sum(values(pairs, "credit_frames")) or 0),
                      cell(sorted(cct)[len(cct) // 2] if cct else None),
                      cell(max(values(pairs, "busbw"), default=None)),
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
        section.blocks.append(Figure("cct_by_mode", png(fig),
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
            sections = [guarded("Points", lambda: _sweep_points(sweep_dir, rows)),
                        guarded("Metrics against the swept value", lambda: _sweep_plot(rows)),
                        guarded("Flow-control modes", lambda: _mode_comparison(sweep_dir, rows))]
    intro = [f"sweep directory: `{sweep_dir.name}`"]
    name = re.sub(r"^\d{8}-\d{6}-", "", sweep_dir.name).removesuffix("-sweep")
    return write_document(sweep_dir, f"{name} (sweep)", intro, sections)
