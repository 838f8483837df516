from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from p4runtime_fake import FakeP4RuntimeServer  # noqa: E402

P4INFO = HERE / "data" / "fabric.p4info.txtpb"


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
    forward_frr(primary, backup) action, the port_down liveness register) and the
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
    reg = info.registers.add()
    reg.preamble.id, reg.preamble.name, reg.preamble.alias = 369000001, "port_down", "port_down"
    reg.type_spec.bitstring.bit.bitwidth = 1
    reg.size = 512
    path = tmp_path / "fabric_frr.p4info.txtpb"
    path.write_text(text_format.MessageToString(info))
    return path
