"""Tuple-typed struct fields on bmv2 (P4_16 7.2.8): laid out as a struct with fields
f0, f1, ... (p4c's EliminateTuples), an element `m.t[1]` being the field `f1`."""

from __future__ import annotations

from p4compiler.compiler import compile_text
from tests.v1model_program import v1model_program


def _primitives(json: dict) -> list[dict]:
    return [p for a in json["actions"] for p in a["primitives"]]


def test_a_tuple_metadata_field_is_laid_out_as_fields_f0_f1() -> None:
    r = compile_text(v1model_program(
        declarations="header s_t { bit<8> b; }",
        metadata="tuple<bit<8>, s_t, s_t[2]> t;",
        ingress="m.t[0] = hdr.h.a; m.t[2][1].setValid(); m.t[2][1].b = m.t[0];"), "t.p4")
    headers = {h["name"] for h in r.json["headers"]}
    assert {"userMetadata.t.f2[0]", "userMetadata.t.f2[1]"} <= headers
    scalars = {f[0] for h in r.json["header_types"] if h["name"] == "scalars_0"
               for f in h["fields"]}
    assert "userMetadata.t.f0" in scalars
    assign = [p for p in _primitives(r.json) if p["op"] == "assign"][-1]
    assert assign["parameters"][0]["value"] == ["userMetadata.t.f2[1]", "b"]

