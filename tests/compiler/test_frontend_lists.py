"""list<T> (P4_16 1.2.4) is typed by the list written for it (lists.py): such values
compile to tuples; any other use of the type is a clear error at its location, and
`list` is a keyword, as in p4c's lexer."""

from __future__ import annotations

import pytest

from p4compiler.compiler import compile_text
from p4compiler.errors import CompileError
from tests.v1model_program import line_of, v1model_program


def program_with(locals_: str = "", body: str = "") -> str:
    return v1model_program(h_fields="bit<8> a;", ingress_locals=locals_, ingress=body)


def compile_with(locals_: str = "", body: str = ""):
    return compile_text(program_with(locals_, body), "l.p4")


def test_a_list_written_out_is_a_tuple_of_its_length() -> None:
    r = compile_with(body="list<bit<8>> l = {1, hdr.h.a, 3}; hdr.h.a = l[1] + l[2];")
    assert r.json["pipelines"]


@pytest.mark.parametrize("locals_, body, where", [
    ("action a(list<bit<8>> l) { }", "a({1});", "action a("),
    ("", "list<bit<8>> l; hdr.h.a = 1;", "list<bit<8>> l;"),
])
def test_other_list_types_are_clear_errors(locals_: str, body: str, where: str) -> None:
    with pytest.raises(CompileError) as e:
        compile_with(locals_, body)
    assert "list<T>: only a list written out" in e.value.message
    assert e.value.loc.line == line_of(program_with(locals_, body), where)


def test_list_is_a_keyword() -> None:
    with pytest.raises(CompileError) as e:
        compile_with(body="bit<8> list = 1;")
    assert "syntax error" in e.value.message
