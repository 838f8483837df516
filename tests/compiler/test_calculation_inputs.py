"""A checksum's field list is a bmv2 calculation's input, which holds header fields and
constants only. p4c writes an expression element (`a ++ b`) as {"type": "expression"}
and simple_switch refuses that JSON at load; we refuse it when compiling, at its line
(p4c's issue1765-bmv2)."""

from __future__ import annotations

import pytest

from p4compiler.compiler import compile_text
from p4compiler.errors import CompileError
from tests.v1model_program import line_of, v1model_program


def program_with(field_list: str) -> str:
    """update_checksum over `field_list`, its list on a line of its own."""
    return v1model_program(
        h_fields="bit<8> a; bit<8> b; bit<16> sum;", ingress="sm.egress_spec = 1;",
        compute_checksum=f"update_checksum(true,\n        {{ {field_list} }},\n"
                         "        hdr.h.sum, HashAlgorithm.csum16);")


@pytest.mark.parametrize("element", ["hdr.h.a ++ hdr.h.b", "hdr.h.a + 1",
                                     "(bit<16>)(hdr.h.a + hdr.h.b)"])
def test_an_expression_in_a_checksum_field_list_is_a_clear_error(element: str) -> None:
    program = program_with(element)
    with pytest.raises(CompileError) as e:
        compile_text(program, "calc.p4")
    assert "takes header fields and constants only" in e.value.message
    assert e.value.loc.line == line_of(program, element)  # the list element


def test_fields_and_constants_are_the_calculation_inputs() -> None:
    result = compile_text(program_with("hdr.h.a, 8w7, hdr.h.b"), "calc.p4")
    inputs = result.json["calculations"][0]["input"]
    assert [i["type"] for i in inputs] == ["field", "hexstr", "field"]


def test_a_cast_element_is_its_operand_as_p4c_writes_it() -> None:
    """p4c's ExpressionConverter drops casts: `(bit<16>)hdr.h.a` is the 8-bit field."""
    result = compile_text(program_with("(bit<16>)hdr.h.a, hdr.h.b"), "calc.p4")
    inputs = result.json["calculations"][0]["input"]
    assert inputs == [{"type": "field", "value": ["h", "a"]},
                      {"type": "field", "value": ["h", "b"]}]
