"""A checksum's field list is a bmv2 calculation's input, which holds header fields and
constants only. p4c writes an expression element (`a ++ b`) as {"type": "expression"}
and simple_switch refuses that JSON at load; we refuse it when compiling, at its line
(p4c's issue1765-bmv2)."""

from __future__ import annotations

import pytest

from p4compiler.compiler import compile_text
from p4compiler.errors import CompileError

PROGRAM = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; bit<16> sum; }
struct headers { h_t h; }
struct meta_t { }
parser P(packet_in pkt, out headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control V(inout headers hdr, inout meta_t m) { apply { } }
control I(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    apply { sm.egress_spec = 1; }
}
control E(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout meta_t m) {
    apply {
        update_checksum(true,
            { LIST },
            hdr.h.sum, HashAlgorithm.csum16);
    }
}
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


@pytest.mark.parametrize("element", ["hdr.h.a ++ hdr.h.b", "hdr.h.a + 1",
                                     "(bit<16>)(hdr.h.a + hdr.h.b)"])
def test_an_expression_in_a_checksum_field_list_is_a_clear_error(element: str) -> None:
    with pytest.raises(CompileError) as e:
        compile_text(PROGRAM.replace("LIST", element), "calc.p4")
    assert "takes header fields and constants only" in e.value.message
    assert e.value.loc.line == 18  # the list element


def test_fields_and_constants_are_the_calculation_inputs() -> None:
    result = compile_text(PROGRAM.replace("LIST", "hdr.h.a, 8w7, hdr.h.b"), "calc.p4")
    inputs = result.json["calculations"][0]["input"]
    assert [i["type"] for i in inputs] == ["field", "hexstr", "field"]


def test_a_cast_element_is_its_operand_as_p4c_writes_it() -> None:
    """p4c's ExpressionConverter drops casts: `(bit<16>)hdr.h.a` is the 8-bit field."""
    result = compile_text(PROGRAM.replace("LIST", "(bit<16>)hdr.h.a, hdr.h.b"), "calc.p4")
    inputs = result.json["calculations"][0]["input"]
    assert inputs == [{"type": "field", "value": ["h", "a"]},
                      {"type": "field", "value": ["h", "b"]}]
