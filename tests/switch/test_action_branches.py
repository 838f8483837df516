"""Branches inside an action (`_jump_if_zero` / `_jump`) become nested Python ifs, and
behave as bmv2 runs them; only what has no such shape (a run-time loop) keeps the
program-counter loop (tests/switch/test_runtime_loops.py)."""

from __future__ import annotations

import copy
from pathlib import Path

from p4compiler import stf
from p4compiler.compiler import compile_text
from p4switch.program import Program
from p4switch.stf_runner import run_embedded

PROGRAM = Path(__file__).parent / "data" / "action_ifs.p4"

# op arg res: add 4, 4 (8), add 5 refused (EE), take 3 (5), take 9 (0), read (0)
SCRIPT = """
packet 0 010400
expect 1 010404
packet 0 010400
expect 1 010408
packet 0 010500
expect 1 0105EE
packet 0 020300
expect 1 020305
packet 0 020900
expect 1 020900
packet 0 030000
expect 1 030000
packet 2 010700
expect 1 010707
"""


def _json() -> dict:
    return compile_text(PROGRAM.read_text(), "action_ifs.p4").json


def test_an_action_with_nested_ifs_is_generated_as_ifs_not_a_program_counter():
    program = Program(_json())
    assert "def " in program.source
    assert "pc = " not in program.source
    assert (program.fused_source or "").count("pc = ") == 0


def test_the_branches_run_as_written():
    outcome = run_embedded(_json(), stf.parse(SCRIPT, "t.stf"), "t.stf")
    assert not outcome.mismatches, outcome.mismatches


def test_an_unstructured_jump_falls_back_to_the_program_counter_and_agrees():
    # a `_jump` to the next primitive, first in the action that runs step's body: it
    # changes nothing, but it is no if/else shape
    fallback = copy.deepcopy(_json())
    branching = [a for a in fallback["actions"]
                 if any(p["op"] == "_jump_if_zero" for p in a["primitives"])]
    assert branching
    for action in branching:
        prims = action["primitives"]
        for p in prims:
            if p["op"] in ("_jump", "_jump_if_zero"):
                tgt = p["parameters"][-1]
                tgt["value"] = hex(int(tgt["value"], 16) + 1)
        prims.insert(0, {"op": "_jump", "parameters": [{"type": "hexstr", "value": "0x1"}]})
    program = Program(fallback)
    assert "pc = " in program.source
    outcome = run_embedded(fallback, stf.parse(SCRIPT, "t.stf"), "t.stf")
    assert not outcome.mismatches, outcome.mismatches
