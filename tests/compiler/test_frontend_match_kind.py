"""match_kind members are values (P4_16 7.1.3, 8.4: assignment, == and !=) in the
top-level namespace: constants and tuples of them compile (the fe_match_kind_values
program runs its packets); bmv2 has no run-time value for them, so an expression that
reads one at run time is refused with p4c-bm2-ss's error, at the member."""

from __future__ import annotations

import pytest

from p4compiler.compiler import compile_text
from p4compiler.errors import CompileError
from tests.v1model_program import position_of, v1model_program


def program_with(top: str = "", body: str = "") -> str:
    return v1model_program(declarations=top, ingress=f"{body} sm.egress_spec = 1;")


def compile_with(top: str = "", body: str = ""):
    return compile_text(program_with(top, body), "mk.p4")


@pytest.mark.parametrize("top", [
    "const match_kind K = lpm;",
    "const tuple<match_kind> T = { exact };",
    "typedef tuple<match_kind, match_kind> kinds_t; const kinds_t KS = { exact, ternary };",
])
def test_match_kind_constants_compile(top: str):
    compile_with(top=top)


@pytest.mark.parametrize("body, member", [
    ("if (exact == lpm) { hdr.h.a = 1; }", "exact == lpm"),
    ("bool same = ternary != exact; hdr.h.a = (bit<8>)(bit<1>)same;", "ternary != exact"),
])
def test_a_match_kind_read_at_run_time_is_refused_as_p4c_bm2_ss_refuses_it(body: str,
                                                                           member: str):
    with pytest.raises(CompileError, match="could not convert expression to Json") as e:
        compile_with(body=body)
    # at the first member read, the one `member` starts with
    assert (e.value.loc.line, e.value.loc.col) == position_of(program_with(body=body), member)


def test_a_comparison_of_match_kinds_is_no_constant():
    with pytest.raises(CompileError, match="not a compile-time constant"):
        compile_with(top="const bool B = exact == lpm;")


def test_a_match_kind_is_no_number():
    with pytest.raises(CompileError, match="cannot implicitly cast match_kind to bit<8>"):
        compile_with(body="hdr.h.a = exact;")
