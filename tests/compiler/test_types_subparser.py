"""InlineSubParsers (p4compiler/passes_types/subparser.py): sub-parser states are
inlined under the instance's name, accept continues in the caller, and the
ty_subparser differential program's STF passes on the embedded switch in-process."""

from __future__ import annotations

from pathlib import Path

import pytest
from ty_stf_helpers import PROGRAMS, _run_stf

from p4compiler.compiler import compile_file, compile_text
from p4compiler.errors import CompileError


def test_subparser_program_stf():
    _run_stf("ty_subparser")


def test_states_are_inlined_once_per_apply():
    j = compile_file(str(PROGRAMS / "ty_subparser.p4")).json
    names = {s["name"] for s in j["parsers"][0]["parse_states"]}
    assert {"tp_start", "tp_ok", "tp_1_start", "tp_1_ok",
            "start_after_tp", "start_after_tp_after_tp"} <= names, names
    # the sub-parser's local is a caller local, one per inlined copy
    scalars = next(h for h in j["header_types"] if h["name"] == "scalars_0")
    fields = {f[0] for f in scalars["fields"]}
    assert any("tp_seen" in f for f in fields) and any("tp_1_seen" in f for f in fields)


def _variant(old: str, new: str) -> str:
    src = Path(PROGRAMS / "ty_subparser.p4").read_text()
    assert old in src
    return src.replace(old, new)


def test_apply_inside_an_expression_or_with_a_non_lvalue_out_argument_is_an_error():
    with pytest.raises(CompileError, match="argument for sum"):
        compile_text(_variant("tp.apply(pkt, hdr.t0, meta.sum);",
                              "tp.apply(pkt, hdr.t0, meta.sum + 1);"), "bad.p4")
    with pytest.raises(CompileError, match="expects 3 arguments"):
        compile_text(_variant("tp.apply(pkt, hdr.t0, meta.sum);",
                              "tp.apply(pkt, hdr.t0);"), "bad.p4")
