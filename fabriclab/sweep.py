"""A sweep: the scenario once per value of one parameter, one table over all points.

One line per point with fixed columns, in the manner of nccl-tests (sweep.json,
sweep.md; traffic/report.py draws the sweep report).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from fabriclab.results import write_json
from fabriclab.runner import FABRIC_P4, run
from fabriclab.scenario import Scenario
from fabriclab.status import StatusLine
from topologies.targets import Target

SWEEP_COLUMNS = ("sent", "received", "lost", "unexplained_loss", "reordered", "pause_frames",
                 "credit_frames", "cct_ms", "busbw", "recovery_gap_ms", "verdict")


def run_sweep(points: list[tuple[str, Scenario]], target: Target, results_root: Path,
              status: StatusLine | None = None, program_source: Path = FABRIC_P4
              ) -> tuple[Path, list[dict]]:
    """Every sweep point one after another; one table (sweep.json, sweep.md) over all."""
    rows = []
    name = points[0][1].name
    sweep_dir = Path(results_root) / (time.strftime("%Y%m%d-%H%M%S") + f"-{name}-sweep")
    sweep_dir.mkdir(parents=True, exist_ok=True)
    for i, (label, scenario) in enumerate(points, 1):
        if status is not None:
            status.set_phase(f"sweep point {i}/{len(points)}: {label}")
        result = run(scenario, target, sweep_dir, status, program_source)
        row = {"point": label, "run": result.run_dir.name}
        row.update({k: getattr(result.metrics, k) for k in SWEEP_COLUMNS})
        rows.append(row)
        write_json(sweep_dir / "sweep.json", rows)  # after every point: nothing is lost
        (sweep_dir / "sweep.md").write_text(sweep_table(rows) + "\n")
    try:
        from traffic.report import write_sweep_report

        write_sweep_report(sweep_dir)
    except Exception as exc:  # noqa: BLE001 - sweep.json and sweep.md are written
        print(f"fabriclab: sweep report left out: {exc}", file=sys.stderr)
    return sweep_dir, rows


def sweep_table(rows: list[dict], first: str = "point") -> str:
    """One line per sweep point (or per row's `first`, e.g. a compared fabric), fixed
    columns (values as measured, '-' where n/a)."""
    cols = (first, *SWEEP_COLUMNS)
    widths = {c: max(len(c), *(len(_cell(r.get(c))) for r in rows)) for c in cols}
    lines = ["  ".join(c.rjust(widths[c]) for c in cols)]
    for r in rows:
        lines.append("  ".join(_cell(r.get(c)).rjust(widths[c]) for c in cols))
    return "\n".join(lines)


def _cell(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)
