"""The SM against real switch processes on loopback: the embedded compiler's artifacts
pushed to two embedded switches (no interfaces), routes installed and read back.

Skipped until the embedded compiler (p4compiler.cli) and switch (p4switch.cli) exist.
"""

from __future__ import annotations

import importlib.util
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from controller.lids import LidMap
from controller.p4info import P4Info
from controller.p4runtime_client import NotPrimaryError, SwitchConnection
from controller.sm import SM_ELECTION_ID, SubnetManager
from topologies.generators import build

ROOT = Path(__file__).resolve().parents[2]
HAND_WRITTEN_P4INFO = Path(__file__).resolve().parent / "data" / "fabric.p4info.txtpb"


def _have(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


@pytest.fixture(scope="module")
def compiled_fabric(tmp_path_factory) -> tuple[Path, Path]:
    """(p4info, bmv2 json) of p4src/fabric.p4 from the embedded compiler."""
    if not _have("p4compiler.cli"):
        pytest.skip("embedded compiler (p4compiler.cli) not available yet")
    out = tmp_path_factory.mktemp("fab")
    result = subprocess.run(
        [sys.executable, "-m", "p4compiler.cli", "--target", "bmv2", "--arch", "v1model",
         "-o", str(out), str(ROOT / "p4src" / "fabric.p4")],
        capture_output=True, text=True, timeout=120, cwd=ROOT)
    p4info = out / "fabric.p4info.txtpb"
    bmv2_json = out / "fabric.json"
    if result.returncode != 0 or not p4info.exists() or not bmv2_json.exists():
        pytest.skip(f"embedded compiler failed on fabric.p4: {result.stderr.strip()[-300:]}")
    return p4info, bmv2_json


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for_port(port: int, proc: subprocess.Popen, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"switch exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"switch did not listen on {port} within {timeout:g}s")


@pytest.fixture
def two_switches(tmp_path):
    """Two embedded switch processes serving P4Runtime on loopback: {name: (address, device)}."""
    if not _have("p4switch.cli"):
        pytest.skip("embedded switch (p4switch.cli) not available yet")
    procs: list[subprocess.Popen] = []
    switches = {}
    try:
        for device_id, name in ((1, "s1"), (2, "s2")):
            port = _free_port()
            log = open(tmp_path / f"{name}.log", "w")  # noqa: SIM115 -- closed with the process
            proc = subprocess.Popen(
                [sys.executable, "-m", "p4switch.cli", "--no-p4", "--device-id", str(device_id),
                 "--grpc-server-addr", f"127.0.0.1:{port}"],
                stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)
            procs.append(proc)
            try:
                _wait_for_port(port, proc)
            except RuntimeError as exc:
                pytest.skip(f"embedded switch did not start: {exc}: "
                            f"{(tmp_path / f'{name}.log').read_text()[-300:]}")
            switches[name] = (f"127.0.0.1:{port}", device_id)
        yield switches
    finally:
        for proc in procs:  # by PID, the processes this fixture started
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(5)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()


def test_compiled_p4info_has_what_the_sm_and_the_hand_written_copy_use(compiled_fabric):
    compiled = P4Info.from_file(compiled_fabric[0])
    hand = P4Info.from_file(HAND_WRITTEN_P4INFO)
    for table in ("FabricIngress.dlid_route",):
        a, b = compiled.table(table), hand.table(table)
        assert [(f.name, f.bitwidth, f.match_type) for f in a.match_fields] == \
            [(f.name, f.bitwidth, f.match_type) for f in b.match_fields]
        assert a.size == b.size
    for action in ("FabricIngress.forward", "FabricIngress.no_route"):
        assert [(p.name, p.bitwidth) for p in compiled.action(action).params] == \
            [(p.name, p.bitwidth) for p in hand.action(action).params]
    for counter in ("FabricIngress.drop_counter", "FabricIngress.rx_port_counter"):
        assert compiled.counter(counter).size == hand.counter(counter).size
    for header in ("packet_in", "packet_out"):
        assert compiled.packet_metadata(header) == hand.packet_metadata(header)


def test_sm_brings_up_two_switches_and_reinstalls_nothing(compiled_fabric, two_switches,
                                                           tmp_path):
    fabric = build("line:2")
    conns = {name: SwitchConnection(name, address, device_id, SM_ELECTION_ID)
             for name, (address, device_id) in two_switches.items()}
    try:
        sm = SubnetManager(fabric, conns, lid_map=LidMap(tmp_path / "guid2lid.json"))
        changes = sm.bring_up(*compiled_fabric, tmp_path / "book.json")
        assert {n: c.inserted for n, c in changes.items()} == {"s1": 3, "s2": 3}
        for name in conns:
            assert sm.read_routes(name) == sm.routes[name]
            assert sm.read_drop_counters(name) == {}
        restarted = SubnetManager(fabric, conns, lid_map=LidMap(tmp_path / "guid2lid.json"))
        restarted.assign_lids()  # reads the switches' tables back instead of rewriting them
        assert all(c.writes == 0 for c in restarted.install_routes().values())
    finally:
        for conn in conns.values():
            conn.close()


def test_arbitration_against_the_embedded_switch(two_switches):
    address, device_id = two_switches["s1"]
    with SwitchConnection("s1", address, device_id, SM_ELECTION_ID):
        with pytest.raises(NotPrimaryError, match=r"s1: not primary .*\(2, 0\)"):
            SwitchConnection("s1", address, device_id, (0, 1))
