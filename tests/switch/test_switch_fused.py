"""The fused per-packet function (p4switch.program.Program._gen_fused) against the
separate parser/ingress/egress/deparser functions: same outputs, same state.

Two switches run the same program with the same entries and the same clock; one
gets every frame through Switch.process(), the other through the data-plane
thread's fast path (fastpath.process_fast). Frames are pseudo-random mixes of
fabric.p4's formats (and garbage), so both parsers' error paths are exercised.
"""

from __future__ import annotations

import random

from fastpath import CPU_PORT, fabric_frames, process_fast

from p4switch import switch as switch_module
from p4switch.program import Program
from p4switch.runtime_api import ActionCall, MatchKind, MatchParam
from p4switch.switch import Switch


def _switch(j: dict) -> Switch:
    sw = Switch({1: "p1", 2: "p2", 3: "p3"}, cpu_port=CPU_PORT)
    sw.load_program(j)
    table = next(t for t in sw.program.tables if t.endswith("dlid_route"))
    action = next(a for a in sw.program.tables[table].action_ids if a.endswith("forward"))
    for dlid in range(1, 9):
        sw.table_add(table, [MatchParam(MatchKind.EXACT, dlid)],
                     ActionCall(action, (1 + dlid % 3,)))
    return sw


def test_fabric_program_is_fused(fabric_json):
    assert Program(fabric_json).fused is not None


def test_fused_path_matches_the_separate_functions(fabric_json, monkeypatch):
    clock = [1000.0]
    monkeypatch.setattr(switch_module.time, "monotonic", lambda: clock[0])
    a, b = _switch(fabric_json), _switch(fabric_json)
    assert b.program.fused is not None
    for i, (port, frame) in enumerate(fabric_frames(random.Random(4), 600)):
        clock[0] += 0.000037
        got_a = a.process(port, frame)
        got_b = process_fast(b, port, frame)
        assert sorted(got_a) == sorted(got_b), f"frame {i} from port {port}: {frame.hex()}"
    for name, r in a.program.registers.items():
        assert r.cells == b.program.registers[name].cells, name
    for name, c in a.program.counters.items():
        other = b.program.counters[name]
        assert (c.npkts, c.nbytes) == (other.npkts, other.nbytes), name
    assert a.pipeline_errors == b.pipeline_errors


def test_rewriting_a_field_with_its_own_value_keeps_the_frame(fabric_json):
    """fabric.p4 sets the LRH's VL from the SL on every hop; with the default
    mapping the value does not change and the frame leaves as it came (the same
    object: no copy, no re-pack)."""
    sw = _switch(fabric_json)
    frame = bytes.fromhex("0000000000b2" "0000000000a1" "88b5") + \
        bytes([0x00, 1, 0, 2, 0, 7, 0, 24]) + bytes(8 + 24)
    out = process_fast(sw, 1, frame)
    assert [p for p, _f in out] == [3]
    assert out[0][1] is frame


def test_the_fused_function_sends_and_counts_what_the_socket_refuses(fabric_json):
    """Through the data-plane thread's batch loop: the fused function hands a frame
    to its port's socket itself; a send that fails is a tx_error of that port."""
    sw = _switch(fabric_json)
    for port in (1, 2, 3):
        sw.tm.port(port)
    sent = []

    def refuse(_frame):
        raise OSError("no buffer space")
    sw.tm.ports[3].send = sent.append
    sw.tm.ports[2].send = refuse
    frames = [bytes.fromhex("0000000000b2" "0000000000a1" "88b5") +
              bytes([0x00, 1, 0, dlid, 0, 7, 0, 24]) + bytes(8 + 24) for dlid in (2, 1, 2)]

    def recv(_bufsize):
        if not frames:
            raise BlockingIOError
        return frames.pop(0)
    with sw._lock:
        sw._batch_path(sw.program)(recv, 2048, 1, 0.0, 0, None)
    assert len(sent) == 2  # DLID 2 -> port 3
    assert sw.port_drops(2)["tx_error"] == 1  # DLID 1 -> port 2
    assert sw.pipeline_errors == 0
