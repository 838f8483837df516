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
