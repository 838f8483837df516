"""fabric.p4 and SA frames, one frame at a time through the embedded switch: a host's query is
punted to the CPU port with the port it came in on, never forwarded by its DLID, and the SM's
packet-out leaves by the port it names."""

from __future__ import annotations

import struct
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fabric"))
from fabric_harness import CPU_PORT, FABRIC_P4, Fabric  # noqa: E402

from traffic.frames import Kind, PathRecord, SaMethod, parse_sa_frame, sa_frame  # noqa: E402

PACKET_IN = struct.Struct("!HH")  # packet_in_t: ingress_port, reason
PACKET_OUT = struct.Struct("!HH")  # packet_out_t: egress_port, flags


@pytest.fixture(scope="module")
def fabric():
    try:
        from p4compiler.compiler import compile_file
    except ImportError as e:
        pytest.skip(f"embedded compiler not available: {e}")
    return Fabric(compile_file(str(FABRIC_P4)).json)


def test_a_query_is_punted_with_its_ingress_port_even_when_its_dlid_is_routed(fabric):
    fabric.route(5, 2)
    query = sa_frame(SaMethod.GET, 42, [PathRecord(dname="h3")], src_mac=0x0200_0000_0001,
                     dlid=5, slid=1)
    ((port, frame),) = fabric.send(3, query)
    assert port == CPU_PORT
    assert PACKET_IN.unpack_from(frame) == (3, Kind.SA)
    assert frame[PACKET_IN.size:] == query
    assert parse_sa_frame(frame[PACKET_IN.size:]).tid == 42


def test_an_answer_sent_as_packet_out_leaves_by_the_port_the_sm_names(fabric):
    answer = sa_frame(SaMethod.GET_RESP, 42, [PathRecord(dlid=3, sl=1, dname="h3")],
                      dst_mac=0x0200_0000_0001, dlid=1)
    out = fabric.send(CPU_PORT, PACKET_OUT.pack(4, 0) + answer)
    assert out == [(4, answer)]
