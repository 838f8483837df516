"""core.p4's static_assert (P4_16 1.2.4): evaluated by the compiler, at top level in a
constant and as a statement; a false or non-constant check is an error at the call."""

from __future__ import annotations

import json

import pytest

from p4compiler.compiler import compile_text
from p4compiler.errors import CompileError
from tests.v1model_program import line_of, v1model_program


def program_with(check: str) -> str:
    """`check` as I's first statement, after top-level constants that it may read."""
    return v1model_program(
        declarations="const bit<8> W = 8;\nconst bool w_ok = static_assert(W == 8);",
        h_fields="bit<8> a;", ingress=f"{check}; sm.egress_spec = 1;")


def compile_with(check: str):
    return compile_text(program_with(check), "sa.p4")


def test_checks_that_hold_leave_no_trace_in_the_pipeline() -> None:
    program = compile_with('static_assert(W + 1 == 9, "W is a byte")').json
    assert "static_assert" not in json.dumps(program)
    assert any(prim["op"] == "assign" for a in program["actions"] for prim in a["primitives"])


@pytest.mark.parametrize(("check", "message"), [
    ('static_assert(W == 9, "W must be 9")', "static_assert failed: W must be 9"),
    ("static_assert(W > 8)", "static_assert failed: the condition is false"),
    ("static_assert(hdr.h.a == 1)", "not a compile-time constant"),
])
def test_a_false_or_runtime_check_is_an_error_at_the_call(check: str, message: str) -> None:
    with pytest.raises(CompileError) as e:
        compile_with(check)
    assert message in e.value.message
    assert e.value.loc.line == line_of(program_with(check), check)
