"""Parser value sets: a struct-typed value set in a select on several keys, the JSON
and P4Info p4c writes for it, and values added by the control plane (STF `pvs_add`, as
simple_switch_CLI spells it) on the embedded switch."""

from __future__ import annotations

import pytest
from fidelity_helpers import PROGRAMS

from p4compiler import stf
from p4compiler.compiler import compile_file, compile_text
from p4compiler.errors import CompileError
from p4switch.stf_runner import run_embedded

# bmv2's simple_switch_CLI (this install) cannot add values whose width is not 8k+1
# bits (its int_to_bytes is given a float byte count), so these run on the embedded
# switch only; the program's own STF (empty sets) runs on both switches.
SCRIPT = """
pvs_add pairs 0x08005
pvs_add P.pairs 0x86dd0
pvs_add pairs 0x12341
pvs_remove pairs 0x12341
pvs_add types 0x9999
packet 0 000000000001 000000000000 8100 5001 0800
expect 1 000000000001 000000000001 8100 5001 0800
packet 0 000000000001 000000000000 8100 0001 86dd
expect 1 000000000001 000000000001 8100 0001 86dd
packet 0 000000000001 000000000000 9999 4001 0800
expect 1 000000000001 000000000000 9999 4001 0800
packet 0 000000000001 000000000000 9999 0001 0800
expect 1 000000000001 000000000002 9999 0001 0800
packet 0 000000000001 000000000000 8100 1001 1234
expect 1 000000000001 000000000000 8100 1001 1234
pvs_clear types
packet 0 000000000001 000000000000 9999 5001 0800
expect 1 000000000001 000000000000 9999 5001 0800
"""


def _json() -> dict:
    return compile_file(str(PROGRAMS / "value_sets.p4")).json


def test_struct_value_set_is_one_parse_vset_over_both_keys() -> None:
    j = _json()
    assert {v["name"]: v["compressed_bitwidth"] for v in j["parse_vsets"]} == {
        "P.pairs": 20, "P.types": 16}
    (st,) = [s for s in j["parsers"][0]["parse_states"] if s["name"] == "tagged"]
    assert [k["value"] for k in st["transition_key"]] == [["tag", "type"], ["tag", "pcp"]]
    assert st["transitions"][0] == {"type": "parse_vset", "value": "P.pairs", "mask": None,
                                    "next_state": "matched"}


def test_struct_value_set_p4info_has_a_match_field_per_struct_field() -> None:
    info = compile_file(str(PROGRAMS / "value_sets.p4")).p4info
    (vs,) = [v for v in info.value_sets if v.preamble.name == "P.pairs"]
    assert [(m.name, m.bitwidth) for m in vs.match] == [("type", 16), ("pcp", 4)]
    assert vs.size == 4


def test_values_added_by_the_control_plane_match() -> None:
    script = stf.parse(SCRIPT, "pvs.stf")
    outcome = run_embedded(_json(), script, "pvs.stf")
    assert not outcome.mismatches, "\n".join(outcome.mismatches)


def test_value_set_whose_struct_does_not_fit_the_keys_is_an_error() -> None:
    src = (PROGRAMS / "value_sets.p4").read_text().replace(
        "struct pair_t { bit<16> type; bit<4> pcp; }", "struct pair_t { bit<16> type; }")
    with pytest.raises(CompileError) as e:
        compile_text(src, "v.p4")
    assert "needs a struct type whose fields have the keys' types" in str(e.value)
