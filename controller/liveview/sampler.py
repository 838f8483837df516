"""The live view's sampler: every interval, read every switch at once, make a snapshot,
find the events it implies, pick up the SM's new timeline records, publish.

One thread; the switches are read in parallel (one `SwitchReader` each), so a
switch that does not answer costs at most its reader's timeout, not a sample
per switch.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

from controller.liveview import model
from controller.liveview.reader import SwitchReader
from controller.liveview.state import LiveState
from topologies.description import Fabric


class Sampler:
    def __init__(self, fabric: Fabric, readers: dict[str, SwitchReader], state: LiveState,
                 sm=None, interval: float = 1.0) -> None:
        self.fabric = fabric
        self.readers = readers
        self.state = state
        self.sm = sm  # its timeline and failed links, when the view runs beside an SM
        self.interval = interval
        self.seq = 0
        self.sample_ms: list[float] = []  # how long each sample took (for the docs' figures)
        self._previous: dict[str, model.SwitchReading] = {}
        self._last: dict | None = None
        self._sm_seen = 0
        self._stop = threading.Event()
        self._pool = ThreadPoolExecutor(max_workers=max(1, min(16, len(readers))),
                                        thread_name_prefix="liveview-read")
        self._thread = threading.Thread(target=self._run, daemon=True, name="liveview-sampler")

    def start(self) -> Sampler:
        self._thread.start()
        return self

    def _run(self) -> None:
        next_at = time.monotonic()
        while not self._stop.is_set():
            try:
                self.sample()
            except Exception as exc:  # noqa: BLE001 -- the view must not die with one sample
                self.state.add_events([model.event(
                    "view", "error", f"sample failed: {type(exc).__name__}: {exc}",
                    time.time_ns())])
            next_at = max(next_at + self.interval, time.monotonic())
            self._stop.wait(max(0.0, next_at - time.monotonic()))

    def _sm_failed(self) -> list[str]:
        links = getattr(self.sm, "failed_links", None) or set()
        return [model.link_id(link) for link in list(links)]

    def _sm_events(self) -> list[dict]:
        timeline = getattr(self.sm, "timeline", None)
        if timeline is None:
            return []
        records = timeline[self._sm_seen:]
        self._sm_seen += len(records)
        return [model.sm_event(r) for r in records]

    def sample(self) -> dict:
        """One sample: read, snapshot, events, publish; returns the snapshot."""
        start = time.perf_counter()
        sm_events = self._sm_events()  # before the reads: the snapshot then includes them
        readings = dict(zip(self.readers, self._pool.map(SwitchReader.read,
                                                         self.readers.values())))
        self.seq += 1
        snap = model.snapshot(self.fabric, self.seq, readings, self._previous,
                              self._sm_failed())
        snap["sample_ms"] = round((time.perf_counter() - start) * 1e3, 1)
        self.sample_ms.append(snap["sample_ms"])
        events = sm_events + model.changes(self._last, snap)
        self.state.publish(snap, events)
        # a switch that did not answer keeps its last reading: rates resume over the gap
        self._previous.update({n: r for n, r in readings.items() if r.error is None})
        self._last = snap
        return snap

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)
        self._pool.shutdown(wait=True)
        for reader in self.readers.values():
            reader.close()
