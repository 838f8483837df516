"""SplitTuples on nested tuples (P4_16 7.2.7): every scalar element of a tuple local,
however deep, becomes a local of its own; an inner tuple is used only by element or
assigned as a whole, and using it otherwise is an error naming it as written."""

from __future__ import annotations

import pytest

from p4compiler.compiler import compile_text
from p4compiler.errors import CompileError
from tests.v1model_program import v1model_program


def compile_with(body: str):
    tuple_local = "tuple<bit<8>, tuple<bit<4>, bool>> t = {1, {2, true}};"
    return compile_text(v1model_program(ingress=f"{tuple_local} {body}"), "n.p4")


def test_a_nested_tuple_local_becomes_one_scalar_per_leaf() -> None:
    r = compile_with("t[1][0] = hdr.h.b[3:0]; if (t[1][1]) { hdr.h.a = t[0] + (4w0 ++ t[1][0]); }")
    fields = {f[0] for h in r.json["header_types"] if h["name"] == "scalars_0"
              for f in h["fields"]}
    assert {"t_0_0", "t_0_1_0", "t_0_1_1"} <= fields
    assert "t_0_1" not in fields


def test_an_inner_tuple_used_whole_is_an_error_naming_it() -> None:
    body = "hash(hdr.h.a, HashAlgorithm.identity, 8w0, t[1], 16w256);"
    with pytest.raises(CompileError, match=r"t\[1\]: a tuple local can only be read by element"):
        compile_with(body)
