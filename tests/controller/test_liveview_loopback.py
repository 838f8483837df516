"""The live view against embedded switch processes on loopback (no interfaces, no root):
leafspine:2,2,1 brought up by an SM, sampled over P4Runtime; a port marked down in
port_liveness shows as a failed link within 3 s, an SM reroute record shows as an event,
and the recording replays what was served. Fixtures are in conftest.py."""

from __future__ import annotations

import json
import socket
import time
import urllib.request

import pytest

from controller.agent import PortEvent
from controller.lids import LidMap
from controller.liveness import Liveness
from controller.liveview import RECORDING, LiveView
from controller.liveview.reader import SwitchReader
from controller.liveview.replay import read_recording
from controller.p4info import P4Info
from controller.p4runtime_client import SwitchConnection
from controller.routing import engine
from controller.sm import SM_ELECTION_ID, SubnetManager
from topologies.generators import build


@pytest.fixture
def leafspine_sm(switch_processes, compiled_fabric):
    fabric = build("leafspine:2,2,1")
    switches = switch_processes({s.name: s.device_id for s in fabric.switches})
    conns = {name: SwitchConnection(name, address, dev, SM_ELECTION_ID)
             for name, (address, dev) in switches.items()}
    sm = SubnetManager(fabric, conns, engine=engine("ftree"), lid_map=LidMap())
    sm.bring_up(*compiled_fabric)
    yield sm
    sm.close()


def _get(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=5) as answer:
        return json.loads(answer.read())


def _wait(url: str, ok, timeout: float) -> tuple[dict, float]:
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        snap = _get(url)
        if ok(snap):
            return snap, time.monotonic() - start
        time.sleep(0.1)
    raise AssertionError(f"not within {timeout:g} s: last snapshot {json.dumps(snap)[:600]}")


def test_live_view_of_a_running_fabric(leafspine_sm, tmp_path):
    sm = leafspine_sm
    view = LiveView.start(sm, tmp_path / RECORDING, web_port=0)
    try:
        snap_url = view.url + "api/snapshot"
        snap, _ = _wait(snap_url, lambda s: s["seq"] >= 2, 10)
        assert set(snap["switches"]) == {"s1", "s2", "s3", "s4"}
        for name, sw in snap["switches"].items():
            assert sw["reachable"] and sw["mode"] == "LOSSY" and sw["ports_down"] == [], name
            assert sw["buffer"] == 0 and sw["registers_unread"] is None  # embedded: readable
        assert all(link["state"] == "up" for link in snap["links"].values())
        assert snap["unavailable"] == []
        assert len(snap["ports"]) == 2 * 3 + 2 * 2
        assert all(p["tx_pps"] is not None for p in snap["ports"].values())

        Liveness(sm.connections["s1"]).set(2, up=False)  # as the agent does on carrier loss
        snap, seconds = _wait(snap_url,
                              lambda s: s["links"]["s1:2-s3:1"]["state"] == "down", 3)
        print(f"\nport_liveness down -> failed link in the snapshot: {seconds:.2f} s")
        assert snap["links"]["s1:2-s3:1"]["down_by"] == ["s1 port_liveness: port 2 down"]
        assert snap["switches"]["s1"]["ports_down"] == [2]

        record = sm.handle_port_event(PortEvent("s1", 2, False, time.time_ns(), 0))
        assert record["link"] == "s1:2-s3:1"
        events = _wait(view.url + "api/events?since=0",
                       lambda e: any(x["kind"] == "sm" and "reports port down" in x["text"]
                                     for x in e["events"]), 3)[0]["events"]
        kinds = [e["kind"] for e in events]
        assert kinds[0] == "sm" and "4 switches configured" in events[0]["text"]
        assert "link" in kinds
        snap, _ = _wait(snap_url, lambda s: "SM: reported down by an agent"
                        in s["links"]["s1:2-s3:1"]["down_by"], 3)
        served = _get(snap_url)
    finally:
        view.stop()
    ms = view.sampler.sample_ms
    print(f"sample: {len(ms)} samples of 4 switches, median {sorted(ms)[len(ms) // 2]} ms")
    rec = read_recording(tmp_path / RECORDING)
    assert rec.problems == [] and rec.snapshots[-1]["seq"] >= served["seq"]
    assert any(s == served for s in rec.snapshots)
    assert [e["text"] for e in rec.events][-1] == "live view stopped"


def test_a_switch_that_does_not_answer_is_a_reading_with_the_reason(compiled_fabric):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens once the socket is closed
    info = P4Info.from_file(compiled_fabric[0])
    reader = SwitchReader("s9", f"127.0.0.1:{port}", 9, info, [1, 2], timeout=0.5)
    start = time.monotonic()
    reading = reader.read()
    assert time.monotonic() - start < 3
    assert reading.error and "no P4Runtime server" in reading.error and reading.tx == {}
