"""SwitchConnection against an in-memory P4Runtime server: arbitration, writes, reads, packets."""

from __future__ import annotations

import pytest

from controller.p4info import P4Info, encode
from controller.p4runtime_client import (
    NotPrimaryError,
    SwitchConnection,
    SwitchConnectionError,
    SwitchRpcError,
    SwitchWriteError,
)


def route(conn: SwitchConnection, dlid: int, port: int):
    return conn.p4info.table_entry("FabricIngress.dlid_route", {"hdr.lrh.dlid": dlid},
                                   "FabricIngress.forward", {"port": port})


@pytest.fixture
def conn(fake_switch, p4info_path, bmv2_json):
    server, address = fake_switch
    c = SwitchConnection("s1", address, device_id=1, election_id=(0, 5))
    c.set_pipeline(p4info_path, bmv2_json)
    yield c
    c.close()


def test_pipeline_push_sends_p4info_and_json(conn, fake_switch, bmv2_json):
    server, _ = fake_switch
    assert server.config.p4_device_config == bmv2_json.read_bytes()
    assert server.config.p4info.tables[0].preamble.name == "FabricIngress.dlid_route"


def test_a_pipeline_push_may_take_longer_than_an_ordinary_call(fake_switch, p4info_path,
                                                                bmv2_json):
    """A bring-up pushes to every switch at once and each builds its program: the push
    has its own, longer deadline. A call that is not a push keeps the short one."""
    server, address = fake_switch
    server.pipeline_delay_s = 1.0
    c = SwitchConnection("s1", address, device_id=1, election_id=(0, 5), timeout=0.3)
    try:
        assert c.pipeline_timeout >= 60
        c.set_pipeline(p4info_path, bmv2_json)
        assert server.config.p4_device_config == bmv2_json.read_bytes()
        short = SwitchConnection("s1", address, device_id=1, election_id=(0, 6), timeout=0.3,
                                 pipeline_timeout=0.3)
        try:
            with pytest.raises(SwitchRpcError, match="s1: SetForwardingPipelineConfig "
                                                            "failed: DEADLINE_EXCEEDED"):
                short.set_pipeline(p4info_path, bmv2_json)
        finally:
            short.close()
    finally:
        c.close()


def test_lower_election_id_is_refused_with_a_clear_error(conn, fake_switch):
    _, address = fake_switch
    with pytest.raises(NotPrimaryError, match=r"s1: not primary .*\(0, 1\).*\(0, 5\)"):
        SwitchConnection("s1", address, device_id=1, election_id=(0, 1))


def test_unreachable_switch_names_switch_and_address():
    with pytest.raises(SwitchConnectionError, match="s9.*127.0.0.1:1"):
        SwitchConnection("s9", "127.0.0.1:1", device_id=1, timeout=0.5)


def test_write_in_batches_and_read_back(conn, fake_switch):
    server, _ = fake_switch
    conn.write([conn.insert(route(conn, lid, lid % 4 + 1)) for lid in range(1, 26)],
               batch_size=10)
    assert server.write_requests == 3
    entries = conn.read_table_entries("FabricIngress.dlid_route")
    assert len(entries) == 25
    assert sorted(int.from_bytes(e.match[0].exact.value, "big") for e in entries) == \
        list(range(1, 26))


def test_rejected_entry_is_named_with_switch_and_reason_and_the_rest_installed(conn, fake_switch):
    server, _ = fake_switch
    conn.write([conn.insert(route(conn, 7, 1))])
    with pytest.raises(SwitchWriteError) as err:
        conn.write([conn.insert(route(conn, 7, 2)), conn.insert(route(conn, 8, 2))])
    message = str(err.value)
    assert "switch s1 rejected 1 update" in message
    assert "INSERT FabricIngress.dlid_route {hdr.lrh.dlid=7}" in message
    assert "ALREADY_EXISTS" in message and "entry exists" in message
    assert len(conn.read_table_entries("dlid_route")) == 2


def test_counter_read_by_index_and_all(conn, fake_switch, p4info_path):
    server, _ = fake_switch
    cid = P4Info.from_file(p4info_path).counter("FabricIngress.drop_counter").id
    server.counters[(cid, 2 * 8 + 0)] = (3, 300)
    server.counters[(cid, 1 * 8 + 2)] = (1, 64)
    assert conn.read_counter("FabricIngress.drop_counter", 16) == (3, 300)
    assert conn.read_counters("drop_counter") == {10: (1, 64), 16: (3, 300)}


def test_packet_out_and_packet_in(conn, fake_switch):
    server, _ = fake_switch
    conn.packet_out(b"\x01\x02", {"egress_port": 3, "flags": 0})
    import time
    deadline = time.time() + 5
    while not server.packet_outs and time.time() < deadline:
        time.sleep(0.01)
    out = server.packet_outs[0]
    assert out.payload == b"\x01\x02" and out.metadata[0].value == encode(3, 16)
    server.send_packet_in(b"probe", {1: encode(4, 16), 2: encode(3, 16)})
    packet = conn.packet_ins.get(timeout=5)
    assert packet.payload == b"probe"
    assert packet.metadata == {"ingress_port": 4, "reason": 3}


def test_p4info_canonical_encoding():
    assert encode(0, 9) == b"\x00"
    assert encode(0x1FF, 9) == b"\x01\xff"
    assert encode(5, 16) == b"\x05"
    with pytest.raises(ValueError, match="does not fit in 9 bits"):
        encode(512, 9)


def test_p4info_names_and_errors(p4info_path):
    info = P4Info.from_file(p4info_path)
    assert info.table("dlid_route").field("hdr.lrh.dlid").bitwidth == 16
    assert info.action("forward").param("port").bitwidth == 9
    assert info.counter("FabricIngress.drop_counter").size == 4096
    with pytest.raises(KeyError, match="no table 'nope'"):
        info.table("nope")
    with pytest.raises(KeyError, match="needs parameter"):
        info.table_entry("dlid_route", {"hdr.lrh.dlid": 1}, "forward", {})
