"""match_kind members are values (P4_16 7.1.3, 8.4: assignment, == and !=) in the
top-level namespace: constants and tuples of them compile (the fe_match_kind_values
program runs its packets); bmv2 has no run-time value for them, so an expression that
reads one at run time is refused with p4c-bm2-ss's error, at the member."""

from __future__ import annotations

import pytest

from p4compiler.compiler import compile_text
from p4compiler.errors import CompileError

PROGRAM = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
struct headers { h_t h; }
struct meta_t { }
TOP
parser P(packet_in pkt, out headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control V(inout headers hdr, inout meta_t m) { apply { } }
control I(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) {
    apply { BODY sm.egress_spec = 1; }
}
control E(inout headers hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout meta_t m) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
"""


def compile_with(top: str = "", body: str = ""):
    return compile_text(PROGRAM.replace("TOP", top).replace("BODY", body), "mk.p4")


@pytest.mark.parametrize("top", [
    "const match_kind K = lpm;",
    "const tuple<match_kind> T = { exact };",
    "typedef tuple<match_kind, match_kind> kinds_t; const kinds_t KS = { exact, ternary };",
])
def test_match_kind_constants_compile(top: str):
    compile_with(top=top)


@pytest.mark.parametrize("body, col", [
    ("if (exact == lpm) { hdr.h.a = 1; }", 17),
    ("bool same = ternary != exact; hdr.h.a = (bit<8>)(bit<1>)same;", 25),
])
def test_a_match_kind_read_at_run_time_is_refused_as_p4c_bm2_ss_refuses_it(body: str, col: int):
    with pytest.raises(CompileError, match="could not convert expression to Json") as e:
        compile_with(body=body)
    assert (e.value.loc.line, e.value.loc.col) == (13, col)


def test_a_comparison_of_match_kinds_is_no_constant():
    with pytest.raises(CompileError, match="not a compile-time constant"):
        compile_with(top="const bool B = exact == lpm;")


def test_a_match_kind_is_no_number():
    with pytest.raises(CompileError, match="cannot implicitly cast match_kind to bit<8>"):
        compile_with(body="hdr.h.a = exact;")
