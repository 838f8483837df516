"""`fabriclab-sm up --fc credit --hold-loops PREFIX` on a small real-bmv2 fabric: the
switches started the way every run starts them (topologies/network.py, which makes each
switch's hold loop), the SM run as its own process. Each switch then has its ports 508
and 509 on the loop's veth pair, the SM turns the loop on (hold_loop_config's default
action set_hold_loop(1), clone session 99 -> port 508), says so per switch and in
--metadata, and teardown removes the pairs by name from the ledger."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from p4.v1 import p4runtime_pb2

from topologies import hold_loop
from topologies.generators import build
from topologies.ledger import Ledger
from topologies.network import port_params, start_network
from topologies.targets import TargetError, compile_program, resolve

pytestmark = [pytest.mark.mininet, pytest.mark.bmv2, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]


def _sm(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "controller.cli", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, check=False)


def _clone_ports(address: str, device_id: int, session: int) -> list[int] | None:
    from controller.p4runtime_client import SwitchConnection

    with SwitchConnection("probe", address, device_id, observe_only=True) as obs:
        query = p4runtime_pb2.Entity()
        query.packet_replication_engine_entry.clone_session_entry.session_id = session
        for entity in obs.read([query]):
            clone = entity.packet_replication_engine_entry.clone_session_entry
            if clone.session_id == session:
                return [r.egress_port for r in clone.replicas]
    return None


def test_fabriclab_sm_brings_up_bmv2_switches_with_their_hold_loops_on(tmp_path):
    try:
        target = resolve("bmv2")
    except TargetError as exc:
        pytest.skip(str(exc))
    program = compile_program(target, ROOT / "p4src" / "fabric.p4", ROOT / "build" / "p4")
    fabric = build("line:2")
    ledger = Ledger.create("test-sm-hold-loop", tmp_path / "ledger")
    net = start_network(fabric, target, ledger, tmp_path / "logs", port_params(fabric),
                        constants=program.constants)
    try:
        prefix = ledger.prefix
        assert set(net.loops) == {"s1", "s2"}
        for name, loop in net.loops.items():
            assert hold_loop.wiring_problem(loop) is None  # the pair is here and paced
            cmdline = Path(f"/proc/{net.switch(name).process.pid}/cmdline").read_bytes()
            argv = cmdline.decode().split("\0")
            assert f"508@{prefix}{name}-eth508" in argv and f"509@{prefix}{name}-eth509" in argv
        switches = [a for name, addr in sorted(net.grpc_addrs.items())
                    for a in ("--switch", f"{name}={addr}")]
        metadata = tmp_path / "metadata.json"
        up = _sm("up", "line:2", *switches, "--p4info", str(program.p4info),
                 "--bmv2-json", str(program.bmv2_json), "--guid2lid", str(tmp_path / "g2l.json"),
                 "--fc", "credit", "--hold-loops", prefix, "--metadata", str(metadata))
        assert up.returncode == 0, up.stdout + up.stderr
        assert up.stderr == ""  # no switch without its loop
        for name in ("s1", "s2"):
            assert (f"{name}: held frames: hold loop {prefix}{name}-eth508 -> relay -> "
                    f"{prefix}{name}-eth509 (ports 508 -> 509)") in up.stdout
        record = json.loads(metadata.read_text())
        assert record["held_frames"].startswith("hold loop on every switch (2)")

        status = _sm("status", "line:2", *switches, "--json")
        assert status.returncode == 0, status.stdout + status.stderr
        report = {s["switch"]: s for s in json.loads(status.stdout)["switches"]}
        for name in ("s1", "s2"):
            assert report[name]["held_frames"] == "hold loop"
            assert report[name]["flow_control"]["mode"] == "CREDIT"
            assert _clone_ports(net.grpc_addrs[name], net.device_ids[name],
                                program.constants.hold_session) == [508]
    finally:
        left = net.stop()
    assert left == []
    assert not any(Path("/sys/class/net", i).exists()
                   for loop in net.loops.values() for i in loop.interfaces)
