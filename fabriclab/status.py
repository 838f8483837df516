"""A live status line for long runs: phase, elapsed time and a few counts.

On a terminal the line is redrawn in place; otherwise (CI, pipes) each phase
change prints one line, so logs stay readable.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import TextIO


class StatusLine:
    def __init__(self, stream: TextIO | None = None, interval: float = 0.25) -> None:
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.interval = interval
        self.start = time.monotonic()
        self.phase = "starting"
        self.counts: dict[str, int] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> StatusLine:
        if self.tty:
            self._thread = threading.Thread(target=self._redraw_loop, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join()
            self.stream.write("\r\033[K")
            self.stream.flush()

    def set_phase(self, phase: str) -> None:
        with self._lock:
            self.phase = phase
        if not self.tty:
            self.stream.write(f"[{time.monotonic() - self.start:6.1f}s] {phase}\n")
            self.stream.flush()

    def note(self, text: str) -> None:
        """A line that stays (a URL to open), above the redrawn status line."""
        with self._lock:
            self.stream.write(("\r\033[K" if self.tty else "") + text + "\n")
            self.stream.flush()

    def set_count(self, name: str, value: int) -> None:
        with self._lock:
            self.counts[name] = value

    def set_counts(self, counts: dict[str, int]) -> None:
        for name, value in counts.items():
            self.set_count(name, value)

    def render(self) -> str:
        with self._lock:
            counts = "  ".join(f"{k} {v}" for k, v in self.counts.items())
            return f"[{time.monotonic() - self.start:6.1f}s] {self.phase}  {counts}".rstrip()

    def _redraw_loop(self) -> None:
        while not self._stop.wait(self.interval):
            self.stream.write("\r\033[K" + self.render())
            self.stream.flush()
