"""Stacks of header unions: layout (bmv2 `header_union_stacks`), element access by a
constant index, emission, and clear errors for what is not supported; the
ty_union_stack differential program's STF runs on the embedded switch in-process."""

from __future__ import annotations

import pytest
from ty_stf_helpers import PROGRAMS, _run_stf

from p4compiler.compiler import compile_file, compile_text
from p4compiler.errors import CompileError


def test_union_stack_program_stf() -> None:
    _run_stf("ty_union_stack")


def test_union_stack_is_laid_out_as_unions_with_a_union_stack_entry() -> None:
    j = compile_file(str(PROGRAMS / "ty_union_stack.p4")).json
    unions = {u["name"]: u for u in j["header_unions"]}
    assert set(unions) == {"opts[0]", "opts[1]"}
    names = {h["id"]: h["name"] for h in j["headers"]}
    assert [names[i] for i in unions["opts[1]"]["header_ids"]] == ["opts[1].s", "opts[1].l"]
    (st,) = j["header_union_stacks"]
    assert st["name"] == "opts" and st["union_type"] == "opt_u" and st["size"] == 2
    assert st["header_union_ids"] == [unions["opts[0]"]["id"], unions["opts[1]"]["id"]]
    assert j["deparsers"][0]["order"] == ["eth", "opts[0].s",
                                          "opts[0].l", "opts[1].s", "opts[1].l"]


@pytest.mark.parametrize("old, new, message", [
    ("h.opts[1].s.v = 0xee;", "h.opts.last.s.v = 0xee;", ".last is only available in a parser"),
])
def test_unsupported_union_stack_uses_are_located_errors(old: str, new: str,
                                                         message: str) -> None:
    src = (PROGRAMS / "ty_union_stack.p4").read_text()
    assert old in src
    with pytest.raises(CompileError) as e:
        compile_text(src.replace(old, new), "u.p4")
    assert message in str(e.value) and "u.p4:" in str(e.value)


def test_next_in_extract_is_a_union_stack_extract() -> None:
    j = compile_file(str(PROGRAMS / "ty_union_stack.p4")).json
    ops = [op for st in j["parsers"][0]["parse_states"] for op in st["parser_ops"]]
    targets = [op["parameters"][0] for op in ops if op["op"] == "extract"]
    assert {"type": "union_stack", "value": ["opts", "s"]} in targets
    assert {"type": "union_stack", "value": ["opts", "l"]} in targets
    assert {"type": "regular", "value": "opts[0].s"} in targets


def test_run_time_index_in_an_apply_block_selects_an_element() -> None:
    # HSIndexSimplifier turns it into constant indices, as for stacks of headers.
    src = (PROGRAMS / "ty_union_stack.p4").read_text().replace(
        "h.opts[1].s.v = 0xee;", "h.opts[h.eth.type[0:0]].s.v = 0xee;")
    j = compile_text(src, "u.p4").json
    assert j["header_union_stacks"][0]["size"] == 2
