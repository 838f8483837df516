from __future__ import annotations

import importlib.util
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import netns_lab  # noqa: E402
from p4runtime_fake import FakeP4RuntimeServer  # noqa: E402

P4INFO = HERE / "data" / "fabric.p4info.txtpb"
ROOT = HERE.parents[1]


@pytest.fixture
def p4info_path() -> Path:
    return P4INFO


@pytest.fixture
def bmv2_json(tmp_path) -> Path:
    path = tmp_path / "fabric.json"
    path.write_text('{"program": "fabric.p4"}')
    return path


@pytest.fixture
def fake_switch():
    server = FakeP4RuntimeServer(device_id=1)
    address = server.start()
    yield server, address
    server.stop()


@pytest.fixture
def fake_fabric_switches():
    """Fake switches by name, started on demand: make('s1') -> (server, address)."""
    servers = []

    def make(_name: str):
        server = FakeP4RuntimeServer()
        servers.append(server)
        return server, server.start()

    yield make
    for server in servers:
        server.stop()


@pytest.fixture
def frr_p4info_path(tmp_path) -> Path:
    """The hand-written P4Info plus reroute.p4's additions (dlid_route's
    forward_frr(primary, backup) action, the port_liveness table) and the
    sl_to_vl table."""
    from google.protobuf import text_format
    from p4.config.v1 import p4info_pb2

    info = text_format.Parse(P4INFO.read_text(), p4info_pb2.P4Info())
    frr = info.actions.add()
    frr.preamble.id, frr.preamble.name, frr.preamble.alias = \
        16801234, "FabricIngress.forward_frr", "forward_frr"
    for pid, name in ((1, "primary"), (2, "backup")):
        frr.params.add(id=pid, name=name, bitwidth=9)
    table = next(t for t in info.tables if t.preamble.name == "FabricIngress.dlid_route")
    table.action_refs.add(id=frr.preamble.id)
    set_vl = info.actions.add()
    set_vl.preamble.id, set_vl.preamble.name, set_vl.preamble.alias = \
        16805678, "FabricIngress.set_vl", "set_vl"
    set_vl.params.add(id=1, name="vl", bitwidth=4)
    sl_table = info.tables.add()
    sl_table.preamble.id, sl_table.preamble.name, sl_table.preamble.alias = \
        33601234, "FabricIngress.sl_to_vl", "sl_to_vl"
    sl_table.match_fields.add(id=1, name="hdr.lrh.sl", bitwidth=4,
                             match_type=p4info_pb2.MatchField.EXACT)
    sl_table.action_refs.add(id=set_vl.preamble.id)
    sl_table.size = 16
    down = info.actions.add()
    down.preamble.id, down.preamble.name, down.preamble.alias = \
        16809999, "FabricIngress.set_ports_down", "set_ports_down"
    down.params.add(id=1, name="down", bitwidth=512)
    liveness = info.tables.add()
    liveness.preamble.id, liveness.preamble.name, liveness.preamble.alias = \
        33609999, "FabricIngress.port_liveness", "port_liveness"
    liveness.action_refs.add(id=down.preamble.id)
    liveness.size = 1
    path = tmp_path / "fabric_frr.p4info.txtpb"
    path.write_text(text_format.MessageToString(info))
    return path


# ---- the embedded compiler and switch as processes (test_sm_loopback, test_sm_cli_live)


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
def switch_processes(tmp_path):
    """start({"s1": 1, ...}) -> {name: (address, device id)}: embedded switch processes
    (no program, no interfaces) serving P4Runtime on free loopback ports, stopped by PID."""
    if not _have("p4switch.cli"):
        pytest.skip("embedded switch (p4switch.cli) not available yet")
    procs: list[subprocess.Popen] = []

    def start(devices: dict[str, int]) -> dict[str, tuple[str, int]]:
        switches = {}
        for name, device_id in devices.items():
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
        return switches

    try:
        yield start
    finally:
        for proc in procs:  # by PID, the processes this fixture started
            netns_lab.stop(proc)


@pytest.fixture
def two_switches(switch_processes):
    """Two embedded switch processes serving P4Runtime on loopback: {name: (address, device)}."""
    return switch_processes({"s1": 1, "s2": 2})
