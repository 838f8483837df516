"""What the live view holds between samples, and the recording a replay reads.

`LiveState` keeps the fabric, the latest snapshot and every event (numbered
from 1), for the web server's threads and the sampler's; each snapshot and
event is also appended to the recording as one JSON line, so a finished run
replays exactly what the page showed:

    {"kind": "fabric", "schema": ..., "fabric": ..., "nodes": [...], "links": [...]}
    {"kind": "snapshot", "seq": 1, "t_ns": ..., "switches": {...}, "ports": {...}, ...}
    {"kind": "event", "seq": 1, "sample": 1, "t_ns": ..., "kind_of": ..., "severity": ...,
     "text": ...}

An event's own `kind` (link, switch, flow_control, sm, view) is stored as
`kind_of` in the recording, so that `kind` always says what the line is.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

RECORDING = "liveview.jsonl"  # in a run's result directory


class LiveState:
    def __init__(self, fabric_doc: dict, recording: Path | None = None) -> None:
        self.fabric = fabric_doc
        self.recording = Path(recording) if recording is not None else None
        self._lock = threading.Lock()
        self._snapshot: dict | None = None
        self._events: list[dict] = []
        if self.recording is not None:
            self.recording.parent.mkdir(parents=True, exist_ok=True)
            self.recording.write_text(json.dumps({"kind": "fabric", **fabric_doc}) + "\n")

    def _append(self, lines: list[dict]) -> None:
        if self.recording is None or not lines:
            return
        with self.recording.open("a") as f:
            f.write("".join(json.dumps(line) + "\n" for line in lines))

    def publish(self, snapshot: dict, events: list[dict] = ()) -> None:
        """A new snapshot and the events that came with it."""
        with self._lock:
            self._snapshot = snapshot
            lines = [{"kind": "snapshot", **snapshot}]
            lines += self._number(events)
            self._append(lines)

    def add_events(self, events: list[dict]) -> None:
        with self._lock:
            self._append(self._number(events))

    def _number(self, events: list[dict]) -> list[dict]:
        lines = []
        for event in events:
            # `sample`: the snapshot it came with or after (a replay shows it from there)
            numbered = {**event, "seq": len(self._events) + 1,
                        "sample": self._snapshot["seq"] if self._snapshot else 0}
            self._events.append(numbered)
            lines.append(to_line(numbered))
        return lines

    def snapshot(self) -> dict | None:
        with self._lock:
            return self._snapshot

    def events_since(self, since: int) -> tuple[list[dict], int]:
        """(events numbered above `since`, the last number)."""
        with self._lock:
            return self._events[max(0, since):], len(self._events)


def to_line(event: dict) -> dict:
    """An event as a recording line (its kind under `kind_of`)."""
    line = {k: v for k, v in event.items() if k != "kind"}
    return {"kind": "event", "kind_of": event.get("kind"), **line}


def from_line(line: dict) -> dict:
    """A recording's event line as the event the page shows."""
    event = {k: v for k, v in line.items() if k not in ("kind", "kind_of")}
    return {"kind": line.get("kind_of"), **event}
