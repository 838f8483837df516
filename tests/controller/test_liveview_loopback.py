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
from controller.program_layout import layout
from controller.readout import BLOCKED_QUANTUM_NS
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


@pytest.mark.timing
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


def test_reads_are_planned_per_wired_port_and_class_in_use(compiled_fabric):
    """What one sample asks for, and how the answers are laid out (no switch needed)."""
    from p4.v1 import p4runtime_pb2

    from controller.liveview import reader as rd
    from controller.p4info import encode

    info = P4Info.from_file(compiled_fabric[0])
    r = SwitchReader("s1", "127.0.0.1:1", 1, info, [3, 1, 2])
    per_class = r.num_classes
    first = r.counter_request(scan_classes=True)
    kinds = [e.WhichOneof("entity") for e in first]
    # tx, rx: 3 ports; pause_rx/tx: 3 ports x class 0; drops: 3 x 8; class_tx: 3 x classes
    assert kinds.count("counter_entry") == 3 + 3 + 2 * 3 + 3 * r.reasons + 3 * per_class
    assert kinds.count("table_entry") == 2  # port_liveness and fc_config defaults
    assert len(r.counter_request(False, drops=False)) == 3 + 3 + 2 * 3 + 2
    assert len(r.register_request()) == 3 * 3 + 3  # 3 per-class registers + egress_queued

    def counter(name, index, packets):
        e = p4runtime_pb2.CounterEntry(counter_id=info.counter(name).id)
        e.index.index, e.data.packet_count = index, packets
        return p4runtime_pb2.Entity(counter_entry=e)

    def register(name, index, value):
        e = p4runtime_pb2.RegisterEntry(register_id=info.register(name).id)
        e.index.index = index
        e.data.bitstring = encode(value, 64)
        return p4runtime_pb2.Entity(register_entry=e)

    liveness = p4runtime_pb2.Entity(table_entry=info.table_entry(
        "FabricIngress.port_liveness", {}, "FabricIngress.set_ports_down", {"down": 1 << 2}))
    counters = [counter(rd.TX_COUNTER, 2, 40), counter(rd.RX_COUNTER, 1, 7),
                counter("pause_rx", 3 * per_class, 2), counter("class_tx", 2 * per_class + 1, 9),
                counter(rd.DROP_COUNTER, 1 * r.reasons + 2, 5), liveness]
    mode_action = info.action("FabricIngress.set_fc_mode")
    fc = p4runtime_pb2.Entity(table_entry=info.table_entry(
        "FabricIngress.fc_config", {}, mode_action.name,
        {p.name: 2 if p.name == "mode" else 0 for p in mode_action.params}))
    counters.append(fc)
    registers = [register("blocked_ns", 2 * per_class, 123),
                 register("fc_buffer", 1 * per_class, 4),
                 register("blocked_seen_ns", 2 * per_class + 1, 77)]
    got = r.decode(1000, counters + registers, registers_read=True)
    assert got.tx == {2: 40} and got.rx == {1: 7} and got.pause_rx == {3: 2}
    assert got.drops == {1: {"tail": 5}, 2: {}, 3: {}}
    assert got.blocked_ns == {2: 123} and got.blocked_now == {2: True}
    assert got.buffer == {1: 4} and got.queued is None  # egress_queued not in the answer
    assert got.down == frozenset({2}) and got.mode == "CREDIT" and got.error is None
    assert r.classes == {0, 1}  # class 1 carried data on port 2: read from now on
    unread = r.decode(2000, counters[:2], registers_read=False)
    assert unread.blocked_ns is None and unread.buffer is None and unread.queued is None
    assert unread.drops == got.drops  # the totals last read, until the next drop read


def test_a_switch_that_cannot_read_registers_keeps_its_counters(compiled_fabric):
    """As bmv2's P4Runtime server: register reads are UNIMPLEMENTED. The reader asks once,
    says why, and from then on reads the counters alone, the registers' counter forms
    among them: buffer, blocked time and blocked-now are derived from those."""
    import grpc
    from p4runtime_fake import FakeP4RuntimeServer

    from controller.liveview import model

    class NoRegisters(FakeP4RuntimeServer):
        reads: list[int] = []

        def Read(self, request, context):  # noqa: N802 -- the servicer's name
            kinds = [e.WhichOneof("entity") for e in request.entities]
            self.reads.append(kinds.count("register_entry"))
            if "register_entry" in kinds:
                context.abort(grpc.StatusCode.UNIMPLEMENTED, "register reads")
            yield from super().Read(request, context)

    info = P4Info.from_file(compiled_fabric[0])
    server = NoRegisters()
    address = server.start()
    server.counters[(info.counter("FabricEgress.tx_port_counter").id, 2)] = (50, 5000)
    per_class = layout(info).num_classes
    steps = {("buffer_in", 1): 9, ("buffer_out", 1): 6, ("blocked_quanta", 2): 3,
             ("tickets_issued", 2): 5, ("tickets_served", 2): 4}
    for (name, port), packets in steps.items():
        server.counters[(info.counter(name).id, port * per_class)] = (packets, 0)
    try:
        reader = SwitchReader("s1", address, 1, info, [1, 2], timeout=2)
        first, second = reader.read(), reader.read()
    finally:
        reader.close()
        server.stop()
    assert first.error is None and first.tx == {2: 50}
    assert "UNIMPLEMENTED: register reads" in first.registers_unread
    assert first.queued is None  # LOSSY queue length: no counter form
    for reading in (first, second):  # from the counters, from the first read on
        assert reading.buffer == {1: 3} and reading.blocked_ns == {2: 3 * BLOCKED_QUANTUM_NS}
        assert reading.blocked_now == {2: True}  # a ticket outstanding at port 2
    assert server.reads[0] > 0 and server.reads[1:] == [0, 0]  # asked once, then not again
    assert second.registers_unread == first.registers_unread and second.tx == {2: 50}
    fabric = build("line:2")
    snap = model.snapshot(fabric, 2, {"s1": second, "s2": model.SwitchReading("s2", 1)},
                          {"s1": first})
    assert snap["ports"]["s1:2"]["tx_pps"] == 0.0
    assert "derived from counters" in snap["unavailable"][0]
    assert "registers not readable" in snap["unavailable"][0]


def test_sm_serve_with_web_prints_the_url_and_serves_the_view(switch_processes,
                                                              compiled_fabric, tmp_path):
    """`fabriclab-sm serve --web 0` as a process: the URL it prints serves every switch;
    SIGTERM stops it and leaves the recording."""
    import signal
    import subprocess
    import sys

    fabric = build("leafspine:2,2,1")
    switches = switch_processes({s.name: s.device_id for s in fabric.switches})
    args = [a for name, (address, _dev) in sorted(switches.items())
            for a in ("--switch", f"{name}={address}")]
    recording = tmp_path / RECORDING
    proc = subprocess.Popen(
        [sys.executable, "-m", "controller.cli", "serve", "leafspine:2,2,1", *args,
         "--p4info", str(compiled_fabric[0]), "--bmv2-json", str(compiled_fabric[1]),
         "--engine", "ftree", "--web", "0", "--view-recording", str(recording)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        url = None
        deadline = time.monotonic() + 60
        while url is None and time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            if line.startswith("live view: "):
                url = line.split(": ", 1)[1].strip()
        assert url and url.startswith("http://127.0.0.1:"), proc.stderr.read()[-500:]
        snap, _ = _wait(url + "api/snapshot", lambda s: s["seq"] >= 1, 10)
        assert sorted(snap["switches"]) == ["s1", "s2", "s3", "s4"]
        assert all(s["reachable"] for s in snap["switches"].values())
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, proc.stderr.read()[-500:]
    rec = read_recording(recording)
    assert rec.snapshots and rec.events[-1]["text"] == "live view stopped"
