"""minSizeInBits() and its siblings fold to constants; header-union locals are laid out;
structs compare field by field. The ty_size_methods program's STF runs on the embedded
switch in-process."""

from __future__ import annotations

import pytest
from p4c_helpers import compile_program
from ty_stf_helpers import _run_stf

from p4compiler import ir
from p4compiler.errors import CompileError


def test_size_methods_program_stf() -> None:
    _run_stf("ty_size_methods")


def test_size_method_values() -> None:
    h = ir.StructLike("header", "h", (ir.StructField("a", ir.Bits(4)),
                                      ir.StructField("v", ir.Varbit(20))))
    assert ir.size_method(h, "minSizeInBits") == 4
    assert ir.size_method(h, "maxSizeInBits") == 24
    assert ir.size_method(h, "minSizeInBytes") == 1
    assert ir.size_method(ir.Stack(h, 3), "maxSizeInBytes") == 9
    assert ir.size_method(ir.Bool(), "minSizeInBits") == 1


def test_size_method_takes_no_arguments() -> None:
    with pytest.raises(CompileError, match="minSizeInBits: unknown method, or wrong arg"):
        compile_program("apply { hdr.ipv4.ttl = (bit<8>) hdr.ipv4.minSizeInBits(1); }")


def test_struct_equality_is_a_conjunction_of_fields() -> None:
    r = compile_program("""
        apply { if (meta.p == meta.q) { hdr.ipv4.ttl = 1; } }
    """, decls="struct pair_t { bit<8> x; bool y; }", meta="pair_t p; pair_t q;")
    cond = r.json["pipelines"][0]["conditionals"][0]["expression"]["value"]
    assert cond["op"] == "and"
    fields = {str(x) for x in (cond["left"], cond["right"])}
    assert any("userMetadata.p.x" in f for f in fields)
    assert any("userMetadata.q.y" in f for f in fields)
