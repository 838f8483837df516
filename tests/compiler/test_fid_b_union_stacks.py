"""Stacks of header unions: push_front/pop_front, .lastIndex and .last in parsers (the
fidelity/union_stack_ops program runs in test_fidelity_programs); here the JSON forms."""

from __future__ import annotations

import pytest
from fidelity_helpers import PROGRAMS

from p4compiler.compiler import compile_file, compile_text
from p4compiler.errors import CompileError


def _json() -> dict:
    return compile_file(str(PROGRAMS / "union_stack_ops.p4")).json


def _prims(j: dict) -> list[dict]:
    return [p for a in j["actions"] for p in a["primitives"]]


def test_push_and_pop_name_the_union_stack() -> None:
    ops = [(p["op"], p["parameters"][0]) for p in _prims(_json()) if p["op"] in ("push", "pop")]
    assert ("push", {"type": "header_union_stack", "value": "u"}) in ops
    assert ("pop", {"type": "header_union_stack", "value": "u"}) in ops


def test_last_member_field_is_a_union_stack_field_select_key() -> None:
    states = {s["name"]: s for s in _json()["parsers"][0]["parse_states"]}
    assert states["oa"]["transition_key"] == [
        {"type": "union_stack_field", "value": ["u", "a", "v"]}]


def test_last_index_reads_the_union_stack() -> None:
    text = str(_json()["parsers"][0])
    assert "'op': 'last_stack_index', 'left': None, 'right': {'type': " \
           "'header_union_stack', 'value': 'u'}" in text


def test_last_outside_a_parser_is_a_located_error() -> None:
    src = (PROGRAMS / "union_stack_ops.p4").read_text()
    old = "h.u[0].a.v = 0xaa;"
    assert old in src
    with pytest.raises(CompileError) as e:
        compile_text(src.replace(old, "h.u.last.a.v = 0xaa;"), "u.p4")
    assert ".last is only available in a parser" in str(e.value) and "u.p4:" in str(e.value)
