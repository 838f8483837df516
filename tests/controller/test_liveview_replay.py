"""The live view's recording read back for a replay, the replay bundle a report links to,
and the web server's routes (controller/liveview/replay.py, server.py)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from controller.liveview import model
from controller.liveview.replay import RecordingError, read_recording, write_bundle
from controller.liveview.server import WebServer, static_file
from controller.liveview.state import RECORDING, LiveState
from topologies.generators import build

FABRIC = build("line:2")


def _readings(t_s: float, down=frozenset()) -> dict[str, model.SwitchReading]:
    return {sw.name: model.SwitchReading(
        sw.name, int(t_s * 1e9), tx={p: int(t_s * 100) for p, _, _ in FABRIC.neighbours(sw.name)},
        down=down) for sw in FABRIC.switches}


def _record(path, samples: int = 3) -> LiveState:
    """A recording like a run's: a bring-up event, then samples; s1's port 2 goes down
    at the last one."""
    state = LiveState(model.fabric_json(FABRIC), path)
    state.add_events([model.event("sm", "info", "subnet manager: 2 switches configured", 1)])
    previous, last = {}, None
    for seq in range(1, samples + 1):
        down = frozenset({2}) if seq == samples else frozenset()
        readings = _readings(float(seq), down)
        readings["s2"] = _readings(float(seq))["s2"]
        snap = model.snapshot(FABRIC, seq, readings, previous)
        state.publish(snap, model.changes(last, snap))
        previous, last = readings, snap
    return state


def test_a_recording_reads_back_as_it_was_published(tmp_path):
    state = _record(tmp_path / RECORDING)
    rec = read_recording(tmp_path / RECORDING)
    assert rec.fabric == model.fabric_json(FABRIC) and rec.problems == []
    assert [s["seq"] for s in rec.snapshots] == [1, 2, 3]
    assert rec.snapshots[-1] == state.snapshot()
    events, _ = state.events_since(0)
    assert rec.events == events
    assert [e["kind"] for e in rec.events] == ["sm", "link"]
    assert rec.events[1]["sample"] == 3 and rec.events[1]["link"] == "s1:2-s2:2"


def test_a_truncated_or_foreign_line_is_skipped_and_named(tmp_path):
    path = tmp_path / RECORDING
    _record(path)
    with path.open("a") as f:
        f.write('{"kind": "mystery"}\n{"kind": "snapshot", "seq": 4, "swi')  # killed mid-line
    rec = read_recording(path)
    assert len(rec.snapshots) == 3
    assert len(rec.problems) == 2
    assert "line 7: unknown kind 'mystery'" in rec.problems[0]
    assert "line 8: not a recording line" in rec.problems[1]


@pytest.mark.parametrize("text, message", [
    ("", "no fabric line"),
    ('{"kind": "snapshot", "seq": 1}\n', "line 1: a 'snapshot' line before the fabric line"),
    ('{"kind": "fabric", "schema": "fabriclab.liveview/0"}\n', "schema 'fabriclab.liveview/0'"),
])
def test_a_recording_that_cannot_be_replayed_says_why(tmp_path, text, message):
    path = tmp_path / RECORDING
    path.write_text(text)
    with pytest.raises(RecordingError, match=message.replace("(", r"\(").replace(")", r"\)")):
        read_recording(path)


def test_the_bundle_is_the_live_page_with_the_recording_as_data(tmp_path):
    assert write_bundle(tmp_path) is None  # a run without a recording: nothing to replay
    _record(tmp_path / RECORDING)
    index = write_bundle(tmp_path)
    assert index == tmp_path / "liveview" / "index.html"
    for asset in ("index.html", "liveview.js", "liveview.css", "vendor/cytoscape.min.js",
                  "vendor/cytoscape.LICENSE"):
        assert (index.parent / asset).read_bytes() == static_file(asset).read_bytes()
    data = (index.parent / "data.js").read_text()
    prefix = "window.FABRICLAB_VIEW = "
    assert data.startswith(prefix) and data.rstrip().endswith(";")
    view = json.loads(data[len(prefix):].rstrip().rstrip(";"))
    assert view["mode"] == "replay" and view["run"] == tmp_path.name
    assert len(view["snapshots"]) == 3 and view["fabric"]["fabric"] == "line:2"
    # nothing the page loads comes from elsewhere
    page = index.read_text()
    assert "http" not in page.replace("http-equiv", "")
    assert write_bundle(tmp_path) == index  # rewritten in place


def _get(url: str):
    with urllib.request.urlopen(url, timeout=5) as answer:
        return answer.status, answer.headers.get("Content-Type"), answer.read()


def test_the_server_serves_the_page_its_assets_and_the_json(tmp_path):
    state = _record(None)
    web = WebServer(state, 0).start()
    try:
        assert web.url.startswith("http://127.0.0.1:")
        status, kind, body = _get(web.url)
        assert status == 200 and kind == "text/html" and b"liveview.js" in body
        assert b'"live"' in _get(web.url + "data.js")[2]
        assert _get(web.url + "vendor/cytoscape.min.js")[0] == 200
        assert json.loads(_get(web.url + "api/fabric")[2]) == state.fabric
        assert json.loads(_get(web.url + "api/snapshot")[2])["seq"] == 3
        answer = json.loads(_get(web.url + "api/events?since=1")[2])
        assert answer["last"] == 2 and [e["seq"] for e in answer["events"]] == [2]
        for bad in ("../state.py", "%2e%2e/state.py", "nothing.js"):
            with pytest.raises(urllib.error.HTTPError) as err:
                _get(web.url + bad)
            assert err.value.code == 404
        with pytest.raises(urllib.error.HTTPError) as err:
            _get(web.url + "api/events?since=x")
        assert err.value.code == 400
    finally:
        web.stop()


def test_before_the_first_sample_the_snapshot_says_so(tmp_path):
    web = WebServer(LiveState(model.fabric_json(FABRIC)), 0).start()
    try:
        assert json.loads(_get(web.url + "api/snapshot")[2]) == {"seq": 0}
    finally:
        web.stop()


def test_a_port_in_use_is_a_clear_error():
    from controller.liveview.server import WebError

    first = WebServer(LiveState(model.fabric_json(FABRIC)), 0).start()
    try:
        with pytest.raises(WebError, match=f"cannot listen on 127.0.0.1:{first.port}"):
            WebServer(LiveState(model.fabric_json(FABRIC)), first.port)
    finally:
        first.stop()


def test_a_run_report_links_the_replay_of_its_recording(tmp_path):
    from fabriclab.results import write_report

    run_dir = tmp_path / "20261204-080000-stream"
    run_dir.mkdir()
    write_report(run_dir)  # no recording: no link, no bundle
    assert "liveview" not in (run_dir / "report.html").read_text()
    assert not (run_dir / "liveview").exists()
    _record(run_dir / RECORDING)
    write_report(run_dir)
    page = (run_dir / "report.html").read_text()
    assert "<a href='liveview/index.html'>liveview/index.html</a>" in page
    assert "(liveview/index.html)" in (run_dir / "report.md").read_text()
    assert (run_dir / "liveview" / "data.js").exists()
    (run_dir / RECORDING).write_text('{"kind": "snapshot"}\n')  # not replayable
    write_report(run_dir)
    assert "not replayable here" in (run_dir / "report.md").read_text()


def test_fabriclab_run_refuses_a_web_port_it_cannot_serve_before_anything_starts(capsys):
    from fabriclab.cli import main

    with socket_listening() as busy:
        assert main(["run", "--scenario", "stream", "--web", str(busy)]) == 2
    err = capsys.readouterr().err
    assert f"fabriclab: error: --web {busy}: 127.0.0.1:{busy} cannot be served" in err
    assert main(["run", "--web", "70000"]) == 2
    assert "expected a TCP port, 0..65535" in capsys.readouterr().err


class socket_listening:  # noqa: N801 -- reads as a with-statement's phrase
    def __enter__(self) -> int:
        import socket

        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(1)
        return self.sock.getsockname()[1]

    def __exit__(self, *exc) -> None:
        self.sock.close()


def test_a_view_that_cannot_start_costs_the_run_one_problem_line(tmp_path):
    import io

    from fabriclab.status import StatusLine
    from fabriclab.view import ViewOptions, start_view, stop_view

    class NoSwitches:  # an SM whose connections are gone
        fabric = FABRIC
        connections: dict = {}

    problems: list[str] = []
    status = StatusLine(io.StringIO())
    assert start_view(NoSwitches(), tmp_path, None, status, problems) is None
    assert problems == []  # not asked for
    assert start_view(NoSwitches(), tmp_path, ViewOptions(web_port=0), status, problems) is None
    assert len(problems) == 1 and problems[0].startswith("live view not started: KeyError")
    stop_view(None, problems)
    assert len(problems) == 1


def test_the_status_line_keeps_a_note_on_its_own_line():
    import io

    from fabriclab.status import StatusLine

    out = io.StringIO()
    status = StatusLine(out)
    status.set_phase("traffic")
    status.note("live view: http://127.0.0.1:8080/")
    assert out.getvalue().splitlines()[-1] == "live view: http://127.0.0.1:8080/"


def test_a_view_that_cannot_start_leaves_no_server_and_no_recording(tmp_path):
    import threading

    from controller.liveview import LiveView

    class NoSwitches:
        fabric = FABRIC
        connections: dict = {}

    before = {t.name for t in threading.enumerate()}
    with pytest.raises(KeyError):
        LiveView.start(NoSwitches(), tmp_path / RECORDING, web_port=0)
    assert "liveview-web" not in {t.name for t in threading.enumerate()} - before
    assert not (tmp_path / RECORDING).exists()
