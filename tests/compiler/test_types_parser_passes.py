"""The parser passes of p4compiler/passes_types/: HoistLookaheads (`lookahead<H>().f`
inside larger parser expressions) and DontCareExtracts (`extract<H>(_)`); each
ty_* differential program's STF runs on the embedded switch in-process."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from p4compiler import stf as stf_format
from p4compiler.compiler import compile_file, compile_text
from p4switch.switch import Switch

PROGRAMS = Path(__file__).resolve().parents[1] / "differential" / "programs"


def _run_stf(stem: str) -> None:
    """Compile PROGRAMS/<stem>.p4 and check its STF packets (no table entries used)."""
    j = compile_file(str(PROGRAMS / f"{stem}.p4")).json
    script = stf_format.parse_file(PROGRAMS / f"{stem}.stf")
    sw = Switch({p: f"p{p}" for p in range(8)}, cpu_port=510)
    sw.load_program(j)
    outputs: dict[int, list[bytes]] = defaultdict(list)
    for c in script.commands:
        kind = type(c).__name__
        if kind == "Packet":
            for port, data in sw.process(c.port, c.data):
                outputs[port].append(data)
        elif kind == "Expect":
            got = outputs[c.port]
            if c.pattern is None:
                assert got == [], f"line {c.line}: unexpected {got[0].hex()}"
            else:
                assert got, f"line {c.line}: nothing on port {c.port}"
                data = got.pop(0)
                assert c.matches(data), f"line {c.line}: port {c.port} got {data.hex()}"
        else:
            raise AssertionError(f"{kind} not handled by this runner")
    assert not any(outputs.values()), f"unexpected {dict(outputs)}"


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
