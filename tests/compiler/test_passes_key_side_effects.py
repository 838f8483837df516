"""KeySideEffects: a key calling a function the type checker inlines makes every key of
its table a `key_N` computed in key order before each apply (the ctl_key_function_call
program runs its packets); p4c's TableKeyNames: a key that is not a name, field, stack
element, constant, slice, mask or isValid() needs a @name annotation."""

from __future__ import annotations

import pytest

from p4compiler.compiler import compile_text
from p4compiler.errors import CompileError
from tests.v1model_program import v1model_program

# table t's second key is KEY, which each test writes
PROGRAM = v1model_program(
    declarations="bit<8> bump(inout bit<8> x) { x = x + 1; return x; }",
    metadata="bit<8> cnt;",
    ingress_locals="action set(bit<8> v) { hdr.h.b = v; }\n"
                   "table t { key = { m.cnt : exact; KEY : exact; hdr.h.isValid() : exact; }\n"
                   "          actions = { set; } }",
    ingress="m.cnt = hdr.h.a; t.apply();")


def test_every_key_is_computed_in_order_before_the_apply_and_keeps_its_name():
    r = compile_text(PROGRAM.replace("KEY : exact", 'bump(m.cnt) : exact @name("c2")', 1))
    t = next(x for p in r.json["pipelines"] for x in p["tables"] if x["name"] == "I.t")
    assert [k["target"][0] for k in t["key"]] == ["scalars"] * 3
    info = next(x for x in r.p4info.tables if x.preamble.name == "I.t")
    assert [m.name for m in info.match_fields] == ["m.cnt", "c2", "hdr.h.isValid()"]
    stmts = r.typed.blocks["ig"].body.stmts
    assigned = [s.lhs.name for s in _flat(stmts) if type(s).__name__ == "Assign"
                and s.lhs.__class__.__name__ == "Name" and s.lhs.name.startswith("key_")]
    assert assigned == ["key_0", "key_1", "key_2"]


def _flat(stmts):
    for s in stmts:
        if type(s).__name__ == "Block":
            yield from _flat(s.stmts)
        else:
            yield s


@pytest.mark.parametrize("key", ["hdr.h.a + 1", "bump(m.cnt)", "(bit<8>)hdr.h.a",
                                 "hdr.h.a ++ hdr.h.b", "~hdr.h.a"])
def test_a_complex_key_without_a_name_is_refused_as_p4c_does(key: str):
    with pytest.raises(CompileError, match="Complex key expression requires a @name"):
        compile_text(PROGRAM.replace("KEY", key, 1))


@pytest.mark.parametrize("key, name", [("hdr.h.a & 0xf0", "hdr.h.a & 0xf0"),
                                       ("hdr.h.a[3:0]", "hdr.h.a[3:0]"), ("8w3", "3")])
def test_keys_p4c_names_by_themselves_need_no_annotation(key: str, name: str):
    info = next(x for x in compile_text(PROGRAM.replace("KEY", key, 1)).p4info.tables
                if x.preamble.name == "I.t")
    assert info.match_fields[1].name == name
