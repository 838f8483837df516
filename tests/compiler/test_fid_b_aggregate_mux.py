"""SplitAggregateMux: `x = c ? a : b` on structs and headers (fidelity/aggregate_mux runs in
test_fidelity_programs); the JSON has no `?` over aggregates, only conditionals/jumps."""

from __future__ import annotations

import json

from fidelity_helpers import PROGRAMS

from p4compiler.compiler import compile_file


def test_aggregate_conditional_becomes_branches_of_assignments() -> None:
    j = compile_file(str(PROGRAMS / "aggregate_mux.p4")).json
    (pick,) = [a for a in j["actions"] if a["name"] == "I.pick"]
    ops = [p["op"] for p in pick["primitives"]]
    assert ops.count("assign_header") == 3 and "_jump_if_zero" in ops
    assert '"op": "?"' not in json.dumps(pick["primitives"])
