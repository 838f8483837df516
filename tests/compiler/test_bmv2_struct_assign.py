"""A struct expression assigned to a struct whose header components read headers the
assignment writes (P4_16 11.1: the right-hand side is evaluated first)."""

from __future__ import annotations

from p4compiler.compiler import compile_text
from tests.v1model_program import v1model_program


def test_a_header_swap_copies_both_headers_before_writing_either() -> None:
    r = compile_text(v1model_program(
        declarations="header g_t { bit<8> a; bit<8> b; } struct pair_t { g_t x; g_t y; }",
        metadata="pair_t p;",
        ingress="m.p = {x = m.p.y, y = m.p.x};"), "s.p4")
    ops = [[q["value"] for q in p["parameters"]] for a in r.json["actions"]
           for p in a["primitives"] if p["op"] == "assign_header"]
    copies = {src: dst for dst, src in ops[:2]}  # both read before either is written
    assert set(copies) == {"userMetadata.p.x", "userMetadata.p.y"}
    assert ops[2:] == [["userMetadata.p.x", copies["userMetadata.p.y"]],
                       ["userMetadata.p.y", copies["userMetadata.p.x"]]]
