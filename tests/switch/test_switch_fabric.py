"""p4src/fabric.p4, compiled by the embedded compiler, running in the switch.

Skipped while the compiler cannot compile fabric.p4."""

from __future__ import annotations

import pytest
from fastpath import both_paths  # noqa: F401 - fixture

from p4switch.runtime_api import ActionCall, MatchKind, MatchParam
from p4switch.switch import Switch

pytestmark = pytest.mark.usefixtures("both_paths")

CPU_PORT = 510
KIND_DATA, KIND_PROBE = 1, 3
DROP_REASONS, DROP_NO_ROUTE, DROP_NOT_FABRIC = 8, 0, 1



@pytest.fixture
def sw(fabric_json) -> Switch:
    s = Switch({1: "p1", 2: "p2", 3: "p3"}, cpu_port=CPU_PORT)
    s.load_program(fabric_json)
    return s


def fabric_frame(dlid: int, kind: int = KIND_DATA, payload: bytes = b"") -> bytes:
    eth = bytes.fromhex("0000000000b2" "0000000000a1" "88b5")
    # VL 0 (what the default sl_to_vl entry sets), SL 2.
    lrh = bytes([0x02, kind]) + dlid.to_bytes(2, "big") + (7).to_bytes(2, "big") + \
        (32).to_bytes(2, "big")
    if kind == KIND_DATA:
        body = bytes(8) + bytes(24)
    elif kind == KIND_PROBE:
        body = bytes(12)
    else:
        body = b""
    return eth + lrh + body + payload


def route(sw: Switch, dlid: int, port: int) -> None:
    sw.table_add("FabricIngress.dlid_route", [MatchParam(MatchKind.EXACT, dlid)],
                 ActionCall("FabricIngress.forward", (port,)))


def test_data_frame_is_routed_by_dlid_unchanged(sw):
    route(sw, 0x42, 3)
    f = fabric_frame(0x42, payload=b"data")
    assert sw.process(1, f) == [(3, f)]
    assert sw.counter_read("FabricIngress.rx_port_counter", 1) == (len(f), 1)
    assert sw.counter_read("FabricEgress.tx_port_counter", 3) == (len(f), 1)


def test_unknown_dlid_is_dropped_and_counted_as_no_route(sw):
    f = fabric_frame(0x99)
    assert sw.process(2, f) == []
    idx = 2 * DROP_REASONS + DROP_NO_ROUTE
    assert sw.counter_read("FabricIngress.drop_counter", idx) == (len(f), 1)


def test_non_fabric_frame_is_dropped_and_counted(sw):
    f = bytes.fromhex("0000000000b20000000000a10800") + bytes(46)
    assert sw.process(1, f) == []
    idx = 1 * DROP_REASONS + DROP_NOT_FABRIC
    assert sw.counter_read("FabricIngress.drop_counter", idx)[1] == 1


def test_probe_is_punted_with_packet_in_header(sw):
    got = []
    sw.set_packet_in_handler(got.append)
    f = fabric_frame(0, kind=KIND_PROBE)
    out = sw.process(2, f)
    assert out == [(CPU_PORT, got[0])]
    assert got[0][:4] == (2).to_bytes(2, "big") + KIND_PROBE.to_bytes(2, "big")
    assert got[0][4:] == f


def test_packet_out_leaves_on_the_requested_port_without_its_header(sw):
    f = fabric_frame(0, kind=KIND_PROBE)
    out = sw.process(CPU_PORT, (3).to_bytes(2, "big") + bytes(2) + f)
    assert out == [(3, f)]


def test_truncated_lrh_is_a_parser_error_and_not_routed(sw):
    route(sw, 0x42, 3)
    f = fabric_frame(0x42)[:17]
    assert sw.process(1, f) == []
