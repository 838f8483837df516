"""A list among the select keys (P4_16 12.6.1) is flattened with its keysets, as p4c's
SimplifySelectList: one key field per element, one value per element in each case."""

from __future__ import annotations

from p4compiler.compiler import compile_text
from tests.v1model_program import v1model_program


def test_a_nested_key_list_becomes_one_key_per_element_and_default_spreads() -> None:
    text = v1model_program().replace(
        "transition accept; }",
        "transition select(hdr.h.a, {hdr.h.b, {hdr.h.a, hdr.h.b}}) {"
        " (1, {2, {3, 4}}): accept; (2, default): accept; default: reject; } }", 1)
    r = compile_text(text, "s.p4")
    start = next(s for s in r.json["parsers"][0]["parse_states"] if s["name"] == "start")
    assert [k["value"] for k in start["transition_key"]] == [["h", "a"], ["h", "b"],
                                                             ["h", "a"], ["h", "b"]]
    values = [(t["value"], t["mask"]) for t in start["transitions"][:2]]
    assert values == [("0x01020304", None), ("0x02000000", "0xff000000")]
