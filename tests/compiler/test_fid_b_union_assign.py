"""Whole header unions assigned (fid_b/union_assign runs in test_fid_b_programs): the
JSON uses bmv2's assign_union, as p4c's ActionConverter does for a header union."""

from __future__ import annotations

from fid_b_helpers import PROGRAMS

from p4compiler.compiler import compile_file


def test_union_assignments_are_assign_union_primitives() -> None:
    j = compile_file(str(PROGRAMS / "union_assign.p4")).json
    pairs = [[x["value"] for x in p["parameters"]] for a in j["actions"]
             for p in a["primitives"] if p["op"] == "assign_union"]
    assert ["u2", "u1"] in pairs                       # u2 = u1
    assert ["saved_0.u1", "u1"] in pairs and ["u1", "saved_0.u1"] in pairs  # struct copies
    assert ["u2", "copy_0.u"] in pairs                 # a union inside a local struct
