"""Whole header unions assigned (fidelity/union_assign runs in test_fidelity_programs): the JSON
copies member by member with assign_header, as p4c's CopyStructures writes it (bmv2's
assign_union copies fields that no other primitive reads as 0: fidelity/union_keys)."""

from __future__ import annotations

from fidelity_helpers import PROGRAMS

from p4compiler.compiler import compile_file


def test_union_assignments_copy_every_member() -> None:
    j = compile_file(str(PROGRAMS / "union_assign.p4")).json
    pairs = [[x["value"] for x in p["parameters"]] for a in j["actions"]
             for p in a["primitives"] if p["op"] == "assign_header"]
    assert ["u2.a", "u1.a"] in pairs and ["u2.b", "u1.b"] in pairs     # u2 = u1
    assert ["saved_0.u1.a", "u1.a"] in pairs and ["u1.b", "saved_0.u1.b"] in pairs
    assert ["u2.a", "copy_0.u.a"] in pairs          # a union inside a local struct
    assert not [p for a in j["actions"] for p in a["primitives"] if p["op"] == "assign_union"]
