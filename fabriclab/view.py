"""A run's live view (controller/liveview): started after the SM's bring-up, stopped before
the SM closes; the recording (`liveview.jsonl`) goes into the run's result directory and
its replay (`liveview/index.html`) is written with the report (docs/liveview.md).

The view is an observer: a view that cannot start or stop costs the run a line in
`problems`, never its results.
"""

from __future__ import annotations

import socket
import sys
from dataclasses import dataclass
from pathlib import Path

from fabriclab.status import StatusLine


class ViewPortError(ValueError):
    """The web port asked for cannot be served."""


@dataclass(frozen=True)
class ViewOptions:
    web_port: int | None = None  # serve the page on 127.0.0.1:web_port (0: any free port)


def check_port(port: int) -> None:
    """Before a run starts: the port can be bound on 127.0.0.1 (ViewPortError if not)."""
    if not 0 <= port <= 65535:
        raise ViewPortError(f"--web {port}: expected a TCP port, 0..65535")
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError as exc:
            raise ViewPortError(f"--web {port}: 127.0.0.1:{port} cannot be served "
                                f"({exc.strerror or exc})") from None


def start_view(sm, run_dir: Path, options: ViewOptions | None, status: StatusLine,
               problems: list[str]):
    """The run's LiveView, or None (not asked for, or it could not start: said in
    `problems`)."""
    if options is None:
        return None
    from controller.liveview import RECORDING, LiveView

    try:
        view = LiveView.start(sm, run_dir / RECORDING, options.web_port)
    except Exception as exc:  # noqa: BLE001 -- an observer must not stop the run
        problems.append(f"live view not started: {type(exc).__name__}: {exc}")
        return None
    if view.url:
        status.note(f"live view: {view.url}")
    return view


def stop_view(view, problems: list[str]) -> None:
    if view is None:
        return
    try:
        view.stop()
    except Exception as exc:  # noqa: BLE001 -- the run's results are written regardless
        problems.append(f"live view did not stop cleanly: {type(exc).__name__}: {exc}")


def write_replay(run_dir: Path) -> Path | None:
    """liveview/index.html from the run's recording (None without one); one line on
    stderr when the recording cannot be replayed."""
    from controller.liveview.replay import RecordingError, write_bundle

    try:
        return write_bundle(run_dir)
    except (RecordingError, OSError) as exc:
        print(f"fabriclab: the live view's replay was not written: {exc}", file=sys.stderr)
        return None
