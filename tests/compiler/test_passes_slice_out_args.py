"""SliceOutArguments: a slice given to an extern's out parameter goes through a temporary
of the slice's width, then a slice assignment (p4c's SideEffectOrdering), in the same
action as the call; a slice in a checksum control is refused as p4c-bm2-ss refuses the
temporary's assignments there (the ctl_slice_out_args program runs the packets)."""

from __future__ import annotations

import pytest

from p4compiler.compiler import compile_text
from p4compiler.errors import CompileError
from tests.v1model_program import v1model_program


def _compile(call: str, checksum: str = ""):
    """`call` in the ingress, which has a register r, and `checksum` in the checksum
    computation, each a statement (an empty one when not given)."""
    return compile_text(v1model_program(
        h_fields="bit<16> a; bit<16> b;", ingress_locals="register<bit<8>>(4) r;",
        ingress=f"{call};", compute_checksum=f"{checksum};"))


def _primitives(r):
    actions = [a for a in r.json["actions"] if a["primitives"]]
    assert len(actions) == 1
    return actions[0]["primitives"]


@pytest.mark.parametrize("call, op, width, keep, field", [
    ("r.read(hdr.h.a[11:4], 0)", "register_read", 8, "0xf00f", "0x0ff0"),
    ("random(hdr.h.a[11:4], 8w1, 8w9)", "modify_field_rng_uniform", 8, "0xf00f", "0x0ff0"),
    ("hash(hdr.h.a[11:0], HashAlgorithm.crc16, 12w0, { hdr.h.b }, 32w4096)",
     "modify_field_with_hash_based_offset", 12, "0xf000", "0x0fff"),
])
def test_an_out_slice_is_a_temporary_then_a_slice_assignment(call: str, op: str, width: int,
                                                              keep: str, field: str):
    r = _compile(call)
    first, second = _primitives(r)
    assert first["op"] == op and first["parameters"][0] == {"type": "field",
                                                           "value": ["scalars", "tmp_0"]}
    assert ["tmp_0", width, False] in r.json["header_types"][0]["fields"]
    assert second["op"] == "assign"
    assert second["parameters"][0] == {"type": "field", "value": ["h", "a"]}
    text = str(second["parameters"][1])
    assert f"'{keep}'" in text and f"'{field}'" in text and "'tmp_0'" in text


def test_each_slice_gets_its_own_temporary_in_the_same_action():
    r = _compile("r.read(hdr.h.a[7:0], 0); r.read(hdr.h.b[15:8], 1)")
    ops = [p["op"] for p in _primitives(r)]
    assert ops == ["register_read", "assign", "register_read", "assign"]
    assert [f[0] for f in r.json["header_types"][0]["fields"]][:2] == ["tmp_0", "tmp_1"]


def test_a_slice_in_a_checksum_control_is_refused_with_a_location():
    with pytest.raises(CompileError, match="checksum controls") as e:
        _compile("", "update_checksum(true, { hdr.h.b }, hdr.h.a[15:0], HashAlgorithm.csum16)")
    assert e.value.loc.line > 0
