"""The parser passes of p4compiler/passes_types/: HoistLookaheads (`lookahead<H>().f`
inside larger parser expressions) and DontCareExtracts (`extract<H>(_)`); each
ty_* differential program's STF runs on the embedded switch in-process."""

from __future__ import annotations

from ty_stf_helpers import PROGRAMS, _run_stf

from p4compiler.compiler import compile_file, compile_text


def test_lookahead_expr_program_stf():
    _run_stf("ty_lookahead_expr")


def test_nested_lookahead_becomes_a_local_read_by_set_lookahead():
    j = compile_file(str(PROGRAMS / "ty_lookahead_expr.p4")).json
    scalars = next(h for h in j["header_types"] if h["name"] == "scalars_0")
    names = [f[0] for f in scalars["fields"]]
    assert any(n.startswith("lookahead_tmp_") for n in names), names
    states = {s["name"]: s for s in j["parsers"][0]["parse_states"]}
    ops = states["start"]["parser_ops"]
    looks = [op["parameters"][1]["value"] for op in ops
             if op["op"] == "set" and op["parameters"][1]["type"] == "lookahead"]
    # `.len` is bits [0, 8) of look_t and `.kind` bits [8, 16)
    assert [0, 8] in looks and [8, 8] in looks


def test_whole_lookahead_rhs_is_left_as_it_was():
    src = PROGRAMS.joinpath("ty_lookahead_expr.p4").read_text().replace(
        "meta.x = pkt.lookahead<look_t>().len + 8w1;", "meta.x = pkt.lookahead<look_t>().len;")
    j = compile_text(src, "whole.p4").json
    ops = {s["name"]: s for s in j["parsers"][0]["parse_states"]}["start"]["parser_ops"]
    first = ops[0]["parameters"]
    assert first[0]["value"][1].endswith("x") and first[1] == {"type": "lookahead",
                                                               "value": [0, 8]}


def test_extract_into_dont_care_program_stf():
    _run_stf("ty_extract_dontcare")


def test_extract_dont_care_without_a_header_type_is_a_clear_error():
    import pytest

    from p4compiler.errors import CompileError

    src = PROGRAMS.joinpath("ty_extract_dontcare.p4").read_text().replace(
        "pkt.extract<skip_t>(_);", "pkt.extract(_);")
    with pytest.raises(CompileError) as e:
        compile_text(src, "noty.p4")
    assert "extract" in str(e.value)


def test_parser_local_initialisers_run_once_per_parser_start():
    _run_stf("ty_parser_locals")


def test_a_loop_back_to_start_gets_a_new_start_state_for_the_initialisers():
    j = compile_file(str(PROGRAMS / "ty_parser_locals.p4")).json
    parser = j["parsers"][0]
    states = {s["name"]: s for s in parser["parse_states"]}
    assert parser["init_state"] == "start" and "start_0" in states
    (goto,) = states["start"]["transitions"]
    assert goto["next_state"] == "start_0"
    loops = [t["next_state"] for t in states["start_0"]["transitions"]]
    assert "start_0" in loops and "start" not in loops
