"""list<T> (P4_16 1.2.4) is typed by the list written for it (lists.py): such values
compile to tuples; any other use of the type is a clear error at its location, and
`list` is a keyword, as in p4c's lexer."""

from __future__ import annotations

import pytest

from p4compiler.compiler import compile_text
from p4compiler.errors import CompileError

PROGRAM = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; }
struct headers { h_t h; }
struct meta_t { }
parser P(packet_in pkt, out headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control V(inout headers hdr, inout meta_t m) { apply { } }
control I(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    LOCALS
    apply { BODY }
}
control E(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


def compile_with(locals_: str = "", body: str = ""):
    return compile_text(PROGRAM.replace("LOCALS", locals_).replace("BODY", body), "l.p4")


def test_a_list_written_out_is_a_tuple_of_its_length() -> None:
    r = compile_with(body="list<bit<8>> l = {1, hdr.h.a, 3}; hdr.h.a = l[1] + l[2];")
    assert r.json["pipelines"]


@pytest.mark.parametrize("locals_, body, line", [
    ("action a(list<bit<8>> l) { }", "a({1});", 12),
    ("", "list<bit<8>> l; hdr.h.a = 1;", 13),
])
def test_other_list_types_are_clear_errors(locals_: str, body: str, line: int) -> None:
    with pytest.raises(CompileError) as e:
        compile_with(locals_, body)
    assert "list<T>: only a list written out" in e.value.message
    assert e.value.loc.line == line


def test_list_is_a_keyword() -> None:
    with pytest.raises(CompileError) as e:
        compile_with(body="bit<8> list = 1;")
    assert "syntax error" in e.value.message
