"""bmv2 JSON whose parser copies a varbit field with a `set` op (as older compilers
write it, instead of p4c's primitive assign_VL): the embedded switch carries the
field's current width with the value, as real simple_switch does."""

from __future__ import annotations

from fidelity_helpers import PROGRAMS, needs_bmv2

from p4compiler import stf as stf_format
from p4compiler.compiler import compile_file
from p4switch.stf_bmv2 import run_bmv2
from p4switch.stf_runner import run_embedded

P4 = PROGRAMS / "varbit_parser_local.p4"


def _json_with_set() -> dict:
    j = compile_file(str(P4)).json
    replaced = 0
    for state in j["parsers"][0]["parse_states"]:
        ops = state["parser_ops"]
        for i, op in enumerate(ops):
            prim = op["parameters"][0] if op["op"] == "primitive" else None
            if prim is not None and prim["op"] == "assign_VL":
                ops[i] = {"op": "set", "parameters": prim["parameters"]}
                replaced += 1
    assert replaced == 2  # tmpv = h.o.data; h.o2.data = tmpv;
    return j


def test_a_varbit_set_in_a_parser_moves_the_width_on_the_embedded_switch() -> None:
    script = stf_format.parse_file(P4.with_suffix(".stf"))
    outcome = run_embedded(_json_with_set(), script, "varbit_parser_local.stf")
    assert not outcome.mismatches, "\n".join(outcome.mismatches)


@needs_bmv2
def test_real_simple_switch_does_the_same() -> None:
    script = stf_format.parse_file(P4.with_suffix(".stf"))
    outcome = run_bmv2(_json_with_set(), script, "varbit_parser_local.stf", timeout=60)
    assert not outcome.mismatches, "\n".join(outcome.mismatches)
