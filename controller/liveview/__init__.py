"""The live view: a web page, served by the SM, that draws the fabric and its state.

    view = LiveView.start(sm, recording=run_dir / "liveview.jsonl", web_port=8080)
    print(view.url)            # http://127.0.0.1:8080/  (None without a web port)
    ...
    view.stop()

About once a second a sampler reads every switch over P4Runtime (reader.py:
frames per port, pause frames, drops, the ports port_liveness marks down, and,
where the switch can read registers, blocked time and buffer occupancy), turns
two consecutive readings into a snapshot (model.py), derives events from the
change and from the SM's reroute timeline, keeps them (state.py) for the web
server (server.py) and appends them to the recording a finished run replays
(replay.py). The drawing is cytoscape.js, vendored in static/vendor with its
licence. docs/liveview.md.
"""

from __future__ import annotations

import time
from pathlib import Path

from controller.liveview import model
from controller.liveview.reader import SwitchReader
from controller.liveview.sampler import Sampler
from controller.liveview.server import WebServer
from controller.liveview.state import RECORDING, LiveState

__all__ = ["RECORDING", "LiveView"]


class LiveView:
    def __init__(self, state: LiveState, sampler: Sampler, web: WebServer | None) -> None:
        self.state = state
        self.sampler = sampler
        self.web = web

    @property
    def url(self) -> str | None:
        return self.web.url if self.web is not None else None

    @classmethod
    def start(cls, sm, recording: Path | None = None, web_port: int | None = None,
              interval: float = 1.0, fabric=None) -> LiveView:
        """Sample the SM's switches (its fabric, or `fabric` where the SM's differs from
        what is cabled) into `recording`, and serve the page on 127.0.0.1:`web_port`
        (0: any free port; None: no page, only the recording). Raises WebError when the
        port cannot be bound."""
        fabric = fabric or sm.fabric
        readers = {}  # first: they connect only when they read, and nothing is left to stop
        for sw in fabric.switches:
            conn = sm.connections[sw.name]
            readers[sw.name] = SwitchReader(sw.name, conn.address, sw.device_id, conn.p4info,
                                            [p for p, _peer, _pp in fabric.neighbours(sw.name)],
                                            getattr(sm, "drop_reasons", None))
        state = LiveState(model.fabric_json(fabric), recording)
        web = WebServer(state, web_port).start() if web_port is not None else None
        state.add_events([model.event("sm", "info", _bringup_summary(sm), time.time_ns())])
        sampler = Sampler(fabric, readers, state, sm, interval).start()
        return cls(state, sampler, web)

    def stop(self) -> None:
        self.sampler.stop()
        if self.web is not None:
            self.web.stop()
        self.state.add_events([model.event("view", "info", "live view stopped",
                                           time.time_ns())])


def _bringup_summary(sm) -> str:
    routes = getattr(sm, "routes", {}) or {}
    backups = getattr(sm, "backups", {}) or {}
    entries = sum(len(t) for t in routes.values())
    spare = sum(sum(1 for b in dict(t).values() if b is not None) for t in backups.values())
    return (f"subnet manager: {len(sm.connections)} switches configured, "
            f"{len(getattr(sm, 'lids', {}) or {})} LIDs, {entries} route entries"
            + (f", {spare} with a backup port" if spare else ""))
