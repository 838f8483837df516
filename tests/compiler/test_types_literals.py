"""FoldLiteralMembers (p4compiler/passes_types/literals.py): struct/header literals as
function arguments and functions returning a header literal; the ty_literal_members
differential program's STF on the embedded switch in-process."""

from __future__ import annotations

from ty_stf_helpers import _run_stf

from p4compiler import ir
from p4compiler.passes_types.literals import fold

HDR = ir.StructLike("header", "o_t", (ir.StructField("a", ir.Bits(8)),
                                      ir.StructField("b", ir.Bits(8))))


def test_literal_members_program_stf():
    _run_stf("ty_literal_members")


def test_member_of_a_list_literal_folds_to_its_component():
    lit = ir.ListExpr((ir.Lit(1, type=ir.Bits(8)), ir.Lit(2, type=ir.Bits(8))), type=HDR)
    got = fold(ir.Member(lit, "b", type=ir.Bits(8)))
    assert isinstance(got, ir.Lit) and got.value == 2


def test_member_of_a_non_literal_is_left_alone():
    e = ir.Member(ir.Name("h", type=HDR), "b", type=ir.Bits(8))
    assert fold(e) is e


def test_tuple_local_program_stf():
    _run_stf("ty_tuple_local")


def test_a_tuple_local_used_whole_is_a_clear_error():
    import pytest
    from ty_stf_helpers import PROGRAMS

    from p4compiler.compiler import compile_text
    from p4compiler.errors import CompileError

    src = PROGRAMS.joinpath("ty_tuple_local.p4").read_text().replace(
        "hdr.o.a = t[0];", "hdr.o.a = t[0]; log_msg(\"{}\", t);")
    with pytest.raises(CompileError, match="tuple local"):
        compile_text(src, "whole.p4")
