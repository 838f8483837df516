"""DefaultActions: a table without default_action gets p4c's `@defaultonly NoAction`."""

from __future__ import annotations

from p4compiler.compiler import compile_text
from p4compiler.p4info import to_text
from tests.v1model_program import v1model_program

PROGRAM = v1model_program(
    h_fields="bit<8> a;",
    ingress_locals="action set(bit<8> v) { hdr.h.a = v; }\n"
                   "table t { key = { hdr.h.a : exact; } actions = { set; } }\n"
                   "table u { key = { hdr.h.a : exact; } actions = { set; NoAction; } "
                   "default_action = set(1); }",
    ingress="t.apply(); u.apply();")


def _tables(r):
    return {t["name"]: t for p in r.json["pipelines"] for t in p["tables"]}


def test_table_without_default_gets_no_action_as_non_const_default():
    r = compile_text(PROGRAM)
    actions = {a["name"]: a["id"] for a in r.json["actions"]}
    t = _tables(r)["I.t"]
    assert t["actions"] == ["I.set", "NoAction"]
    assert t["default_entry"] == {"action_id": actions["NoAction"], "action_const": False,
                                  "action_data": [], "action_entry_const": False}


def test_declared_default_is_kept():
    r = compile_text(PROGRAM)
    u = _tables(r)["I.u"]
    assert u["actions"] == ["I.set", "NoAction"]
    assert [int(x, 16) for x in u["default_entry"]["action_data"]] == [1]


def test_p4info_lists_no_action_as_default_only_in_the_table():
    info = compile_text(PROGRAM).p4info
    ids = {a.preamble.name: a.preamble.id for a in info.actions}
    t = next(x for x in info.tables if x.preamble.name == "I.t")
    refs = [(r.id, r.scope, list(r.annotations)) for r in t.action_refs]
    assert refs == [(ids["I.set"], 0, []), (ids["NoAction"], 2, ["@defaultonly"])]
    assert "const_default_action_id" not in to_text(info).split('name: "I.t"')[1] \
        .split("tables {")[0]


def test_implicit_default_compiles_exactly_like_p4cs_rewritten_table():
    implicit = compile_text(PROGRAM)
    explicit = compile_text(PROGRAM.replace(
        "actions = { set; } }",
        "actions = { set; @defaultonly NoAction; } default_action = NoAction(); }"))
    assert to_text(implicit.p4info) == to_text(explicit.p4info)
    assert implicit.json["actions"] == explicit.json["actions"]
    assert implicit.json["pipelines"] == explicit.json["pipelines"]
