"""The live view's reader on real bmv2 (simple_switch_grpc holding fabric.p4, no ports):
what bmv2's P4Runtime server answers is shown, what it refuses (register reads) is
named, and the reader keeps reading the rest (docs/liveview.md)."""

from __future__ import annotations

import json
import subprocess

import pytest

pytestmark = pytest.mark.bmv2

DEVICE_ID = 9


@pytest.fixture
def bmv2_switch(compiled, tmp_path):
    """(address, P4Info) of a simple_switch_grpc holding fabric.p4, pushed by an SM
    connection that stays open (as during a run)."""
    from google.protobuf import text_format

    from controller.liveness import Liveness
    from controller.p4runtime_client import SwitchConnection
    from controller.sm import SM_ELECTION_ID
    from topologies.ports import free_tcp_port

    program, info = compiled
    json_path, info_path = tmp_path / "fabric.json", tmp_path / "fabric.p4info.txtpb"
    json_path.write_text(json.dumps(program))
    info_path.write_text(text_format.MessageToString(info))
    address = f"127.0.0.1:{free_tcp_port()}"
    proc = subprocess.Popen(["simple_switch_grpc", "--device-id", str(DEVICE_ID), "--no-p4",
                             "--", "--grpc-server-addr", address, "--cpu-port", "510"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    conn = None
    try:
        conn = SwitchConnection("bmv2", address, DEVICE_ID, SM_ELECTION_ID)
        conn.set_pipeline(info_path, json_path)
        Liveness(conn).set(2, up=False)
        yield address, conn.p4info
    finally:
        if conn is not None:
            conn.close()
        proc.terminate()  # the process this fixture started, by its handle
        proc.wait(timeout=10)


def test_bmv2_shows_counters_liveness_and_buffers_from_counters_where_registers_fail(bmv2_switch):
    from controller.liveview import model
    from controller.liveview.reader import SwitchReader
    from topologies.generators import build

    address, info = bmv2_switch
    reader = SwitchReader("s1", address, DEVICE_ID, info, [1, 2])
    try:
        first, second = reader.read(), reader.read()
    finally:
        reader.close()
    assert first.error is None, first.error
    assert first.tx == {1: 0, 2: 0} and first.rx == {1: 0, 2: 0}
    assert first.down == frozenset({2})
    assert first.drops == {1: {}, 2: {}}
    assert first.registers_unread and "UNIMPLEMENTED" in first.registers_unread
    # buffer and blocked time from the counters beside the registers; LOSSY queue: none
    assert first.buffer == {1: 0, 2: 0} and first.blocked_ns == {1: 0, 2: 0}
    assert first.blocked_now == {1: False, 2: False} and first.queued is None
    print(f"\nbmv2: registers unread: {first.registers_unread}")
    fabric = build("line:2")
    snap = model.snapshot(fabric, 2, {"s1": second, "s2": model.SwitchReading("s2", 1)},
                          {"s1": first})
    assert snap["links"]["s1:2-s2:2"]["state"] == "down"
    port = snap["ports"]["s1:1"]
    assert port["util"] == 0.0 and port["blocked"] is False and port["buffer"] == 0
    assert snap["switches"]["s1"]["buffer"] == 0  # shown on bmv2 too
    assert snap["unavailable"] and "derived from counters" in snap["unavailable"][0]
