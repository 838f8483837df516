"""A run's result directory: its name, the files that say what ran, atomic JSON writes,
and the report written last.

    results/<YYYYmmdd-HHMMSS>-<scenario>/   scenario.json versions.json topology.json
        guid2lid.json address_book.json flows/ nics/ pcaps/ counters.json
        telemetry.json metrics.json report.md report.html (docs/run.md)
"""

from __future__ import annotations

import json
import os
import platform
import time
from pathlib import Path

import fabriclab
from topologies.targets import Target

ROOT = Path(__file__).resolve().parent.parent


class ResultsError(ValueError):
    """A results folder no run can write into."""


def check_results_root(results_root: Path) -> None:
    """The folder runs are written under exists (it is made) and takes new folders;
    checked before anything starts, so a run never ends for want of a place to write."""
    try:
        Path(results_root).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ResultsError(f"--results {results_root}: cannot be made: "
                           f"{exc.strerror or exc}") from None
    if not os.access(results_root, os.W_OK | os.X_OK):
        raise ResultsError(f"--results {results_root}: not writable")


def new_run_dir(results_root: Path, name: str) -> Path:
    """results_root/<time>-<name>, with -2, -3 ... when a run of the same second exists."""
    run_id = time.strftime("%Y%m%d-%H%M%S") + f"-{name}"
    Path(results_root).mkdir(parents=True, exist_ok=True)
    run_dir, suffix = Path(results_root) / run_id, 1
    while True:
        try:
            run_dir.mkdir()  # atomic: two runs started in the same second get -1 and -2
            return run_dir
        except FileExistsError:
            suffix += 1
            run_dir = Path(results_root) / f"{run_id}-{suffix}"


def write_json(path: Path, data) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True, default=str) + "\n")
    os.replace(tmp, path)


def versions(target: Target) -> dict:
    """What ran: fabriclab, Python, kernel, tools, the git commit."""
    from topologies.targets import first_line

    found = {"fabriclab": fabriclab.__version__, "python": platform.python_version(),
             "kernel": platform.release(),
             "tcpdump": first_line(["tcpdump", "--version"]),
             "git_commit": first_line(["git", "-C", str(ROOT), "rev-parse", "HEAD"])}
    found.update(target.versions())  # compiler, switch, why, their versions
    return found


def record_held_frames(run_dir: Path, hold) -> None:
    """versions.json's `held_frames` made exact once the switches run: where this run's
    held frames wait (topologies.hold_loop.HoldLoops: "hold loop on every switch ..." or
    "recirculation ...: why"), and per switch in `held_frames_by_switch`."""
    path = run_dir / "versions.json"
    found = json.loads(path.read_text()) if path.exists() else {}
    found["held_frames"] = hold.summary()
    found["held_frames_by_switch"] = hold.held_frames()
    write_json(path, found)


def write_report(run_dir: Path) -> None:
    """report.md and report.html with plots (and the live view's replay when the run
    recorded one); one line saying why when that fails."""
    from fabriclab.view import write_replay

    write_replay(run_dir)
    try:
        from traffic.report import write_report as write

        write(run_dir)
    except Exception as exc:  # noqa: BLE001 - the metrics are written; the report is extra
        (run_dir / "report.md").write_text(
            f"# {run_dir.name}\n\nThe report could not be written ({type(exc).__name__}: "
            f"{exc}); the figures are in metrics.json (`fabriclab report {run_dir}`).\n")
