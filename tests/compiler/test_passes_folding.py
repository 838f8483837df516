"""RemoveUnusedTables and StrengthReduction: what constant folding leaves, as p4c: a
table never applied (or only in a folded-away branch) is gone from the JSON and the
P4Info with the actions only it used; division by a power of two becomes a shift."""

from __future__ import annotations

from test_passes_inline_actions import HEAD, TAIL, compile_ingress

from p4compiler.compiler import compile_text

PROGRAM = """
    const bool DEBUG = false;
    action trace(bit<8> v) { hdr.h.c = v; }
    action fwd() { sm.egress_spec = 1; }
    table debug_t { key = { hdr.h.a : exact; } actions = { trace; } }
    table never_t { key = { hdr.h.a : exact; } actions = { trace; } }
    table fwd_t { key = { hdr.h.a : exact; } actions = { fwd; } }
    apply {
        if (DEBUG) { debug_t.apply(); }
        if (8w4 / 8w1 == 8w4) { fwd_t.apply(); }
    }
"""


def test_folded_away_and_never_applied_tables_leave_json_and_p4info():
    r = compile_ingress(PROGRAM)
    json_tables = [t["name"] for p in r.json["pipelines"] for t in p["tables"]]
    assert "Ig.fwd_t" in json_tables
    assert not {"Ig.debug_t", "Ig.never_t"} & set(json_tables)
    assert [t.preamble.name for t in r.p4info.tables] == ["Ig.fwd_t"]
    assert "Ig.trace" not in {a.preamble.name for a in r.p4info.actions}
    assert "Ig.trace" not in {a["name"] for a in r.json["actions"]}


def test_constant_condition_keeps_only_the_taken_branch():
    r = compile_ingress(PROGRAM)
    conds = [c for p in r.json["pipelines"] for c in p["conditionals"]]
    ingress = next(p for p in r.json["pipelines"] if p["name"] == "ingress")
    assert conds == [] and ingress["init_table"] == "Ig.fwd_t"


def test_sub_control_tables_and_directional_actions_are_lowered_too():
    sub = """
control Sub(inout headers hdr) {
    action inc(inout bit<8> x) { x = x + 1; }
    table unused_t { key = { hdr.h.a : exact; } actions = { NoAction; } }
    table t { key = { hdr.h.a : exact; } actions = { NoAction; } }
    apply { inc(hdr.h.b); hdr.h.c = t.apply().hit ? 8w1 : 8w2; }
}
"""
    r = compile_text(HEAD + sub + "control Ig(inout headers hdr, inout metadata meta, "
                     "inout standard_metadata_t sm) { Sub() s; apply { s.apply(hdr); } }"
                     + TAIL)
    assert all(not a["name"].endswith(".inc") for a in r.json["actions"])
    assert [t.preamble.name for t in r.p4info.tables] == ["Ig.s.t"]


def test_strength_reduction_leaves_no_division_by_a_power_of_two():
    r = compile_ingress("apply { hdr.h.b = hdr.h.a / 8w4 + hdr.h.a % 8w2 + hdr.h.c / 8w1; }")
    ops = set()

    def walk(x):
        if isinstance(x, dict):
            if "op" in x:
                ops.add(x["op"])
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)
    walk(r.json["actions"])
    assert ">>" in ops and "&" in ops and not {"/", "%"} & ops


def test_pure_function_called_as_a_statement_is_dropped():
    r = compile_text(HEAD + "bit<8> g(in bit<8> x) { return x + 1; }\n"
                     "control Ig(inout headers hdr, inout metadata meta, "
                     "inout standard_metadata_t sm) { apply { g(hdr.h.a); hdr.h.b = 1; } }"
                     + TAIL)
    prims = [p for a in r.json["actions"] for p in a["primitives"]]
    assert [p["op"] for p in prims] == ["assign"]
