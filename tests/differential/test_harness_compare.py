"""The differential harness's packet-for-packet comparison (no switch needed)."""

from __future__ import annotations

from harness import Result, compare

from p4compiler import stf as stf_format

SCRIPT = stf_format.parse("""
packet 0 000000000001 000000000002 0800 00
expect 1 000000000001 000000000002 0800 **
packet 0 000000000001 000000000002 0800 01
expect 2 000000000001 000000000002 0800 01
""")
A = bytes.fromhex("000000000001000000000002080000")
B = bytes.fromhex("000000000001000000000002080001")


def test_same_frames_agree_up_to_the_scripts_wildcards():
    c = Result(frames=[{1: [A]}, {2: [B]}])
    d = Result(frames=[{1: [A[:-1] + b"\x7f"]}, {2: [B]}])  # differs under `**` only
    assert compare({"c": c, "d": d}, SCRIPT) == []


def test_a_different_frame_port_or_count_is_reported_with_the_packet():
    c = Result(frames=[{1: [A]}, {2: [B]}])
    other_port = Result(frames=[{1: [A]}, {3: [B]}])
    other_bytes = Result(frames=[{1: [A]}, {2: [B[:-1] + b"\x02"]}])
    extra = Result(frames=[{1: [A, A]}, {2: [B]}])
    fewer = Result(frames=[{1: [A]}])
    assert any(x.startswith("packet 2, port 2") for x in compare({"c": c, "d": other_port},
                                                                 SCRIPT))
    assert any(x.startswith("packet 2, port 2") for x in compare({"c": c, "d": other_bytes},
                                                                 SCRIPT))
    assert any(x.startswith("packet 1, port 1") for x in compare({"c": c, "d": extra}, SCRIPT))
    assert compare({"c": c, "d": fewer}, SCRIPT) == ["(c) sent 2 packets, (d) 1"]
