"""A finished run's live view, replayed from its recording (`liveview.jsonl`).

`read_recording(path)` reads the recording back (a truncated or malformed line,
e.g. from a run that was killed, is skipped and named, never fatal);
`write_bundle(run_dir)` writes `run_dir/liveview/`: the same page and assets
as the live server plus `data.js`, which hands the page the whole recording
(`window.FABRICLAB_VIEW = {"mode": "replay", ...}`). Script tags, not fetch,
so the bundle opens from the file system (file://) as well as over HTTP.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from controller.liveview.model import SCHEMA
from controller.liveview.server import STATIC
from controller.liveview.state import RECORDING, from_line

BUNDLE = "liveview"  # the replay's directory in a run's result directory


class RecordingError(ValueError):
    """A recording that cannot be replayed at all (no fabric line, another schema)."""


@dataclass
class Recording:
    fabric: dict
    snapshots: list[dict] = field(default_factory=list)
    events: list[dict] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # lines skipped, and why

    def as_view(self, run: str) -> dict:
        """What the page's replay mode reads."""
        return {"mode": "replay", "run": run, "fabric": self.fabric,
                "snapshots": self.snapshots, "events": self.events, "problems": self.problems}


def read_recording(path: Path) -> Recording:
    path = Path(path)
    recording: Recording | None = None
    problems: list[str] = []
    with path.open(encoding="utf-8", errors="replace") as f:
        for number, text in enumerate(f, 1):
            if not text.strip():
                continue
            try:
                line = json.loads(text)
                kind = line["kind"]
            except (ValueError, KeyError, TypeError) as exc:
                problems.append(f"{path.name} line {number}: not a recording line "
                                f"({type(exc).__name__}: {exc})")
                continue
            if kind == "fabric":
                if line.get("schema") != SCHEMA:
                    raise RecordingError(f"{path}: line {number}: schema "
                                         f"{line.get('schema')!r}, expected {SCHEMA!r}")
                recording = Recording({k: v for k, v in line.items() if k != "kind"})
            elif recording is None:
                raise RecordingError(f"{path}: line {number}: a {kind!r} line before the "
                                     "fabric line")
            elif kind == "snapshot":
                recording.snapshots.append({k: v for k, v in line.items() if k != "kind"})
            elif kind == "event":
                recording.events.append(from_line(line))
            else:
                problems.append(f"{path.name} line {number}: unknown kind {kind!r}")
    if recording is None:
        raise RecordingError(f"{path}: no fabric line (an empty recording)")
    recording.problems = problems
    return recording


def write_bundle(run_dir: Path) -> Path | None:
    """run_dir/liveview/index.html replaying run_dir's recording; None without one.
    Raises RecordingError for a recording that cannot be replayed."""
    run_dir = Path(run_dir)
    source = run_dir / RECORDING
    if not source.exists():
        return None
    out = run_dir / BUNDLE
    if out.exists():  # an earlier replay: gone, whether or not this one can be written
        shutil.rmtree(out)
    recording = read_recording(source)
    shutil.copytree(STATIC, out)
    data = json.dumps(recording.as_view(run_dir.name), separators=(",", ":"))
    (out / "data.js").write_text(f"window.FABRICLAB_VIEW = {data};\n")
    return out / "index.html"
