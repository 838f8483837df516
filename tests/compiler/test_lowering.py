"""Front/mid-end lowerings p4c does before its bmv2 back end: function inlining,
run-time header stack indices, sub-controls with constructor parameters and
copy-in/copy-out arguments."""

from __future__ import annotations

import json

import pytest
from p4c_helpers import action, compile_program, pipeline, table

from p4compiler.errors import CompileError

STACK = "header item_t { bit<8> v; }"


def scalars(r) -> list[str]:
    return [f[0] for f in r.json["header_types"][0]["fields"]]


def test_function_with_locals_and_returns_is_inlined_with_copy_in() -> None:
    r = compile_program("""
        action a() { hdr.ipv4.ttl = pick(hdr.ipv4.ttl, hdr.ipv4.proto); }
        apply { a(); }
    """, decls="""
        bit<8> pick(in bit<8> x, in bit<8> y) {
            bit<8> m = x;
            if (y > x) { return y; }
            return m;
        }
    """)
    names = scalars(r)
    assert {"x_0", "y_0", "m_0", "retval_0"} <= set(names)
    assert "hasReturned_0" not in names     # the early return only needs an else branch
    prims = action(r, "Ing.a")["primitives"]
    ops = [p["op"] for p in prims]
    assert ops[:3] == ["assign", "assign", "assign"]          # copy-in x, y; m = x
    assert "_jump_if_zero" in ops
    assert prims[-1]["parameters"] == [{"type": "field", "value": ["ipv4", "ttl"]},
                                       {"type": "field", "value": ["scalars", "retval_0"]}]


def test_return_that_cannot_move_into_an_else_uses_a_flag() -> None:
    r = compile_program("""
        apply { hdr.ipv4.id = f(hdr.ipv4.len); }
    """, decls="""
        bit<16> f(bit<16> n) {
            bit<16> r = 1;
            if (n > 10) { r = 2; if (n > 20) { return 9; } }
            r = r + 1;
            return r;
        }
    """)
    assert "hasReturned_0" in scalars(r)


def test_out_and_inout_parameters_are_copied_out_after_the_body() -> None:
    r = compile_program("""
        apply { bit<8> c; clamp(hdr.ipv4.ttl, 10, c); hdr.ipv4.tos = c; }
    """, decls="""
        void clamp(inout bit<8> x, in bit<8> hi, out bit<8> changed) {
            changed = 0;
            if (x > hi) { x = hi; changed = 1; }
        }
    """)
    dump = json.dumps(r.json["actions"])
    assert '"x_0"' in dump and '"changed_0"' in dump and '"hi_0"' not in dump  # constant
    copy_out = [a for a in r.json["actions"]
                if any(p["parameters"][0]["value"] == ["ipv4", "ttl"]
                       for p in a["primitives"] if p["op"] == "assign")]
    assert copy_out[0]["primitives"][0]["parameters"][1] == {
        "type": "field", "value": ["scalars", "x_0"]}


def test_function_call_in_a_condition_and_without_the_keyword() -> None:
    r = compile_program("""
        apply { if (small(hdr.ipv4.ttl)) { hdr.ipv4.tos = 1; } }
    """, decls="bool small(in bit<8> v) { bool r = v < 5; return r; }")
    cond = pipeline(r)["conditionals"][0]["expression"]
    assert "retval_0" in json.dumps(cond)


def test_function_must_return_on_every_path() -> None:
    with pytest.raises(CompileError, match="does not return a value on every path"):
        compile_program("apply { hdr.ipv4.ttl = f(hdr.ipv4.ttl); }",
                        decls="bit<8> f(in bit<8> x) { if (x > 1) { return x; } }")


def test_unreachable_code_after_return_warns() -> None:
    r = compile_program("apply { hdr.ipv4.ttl = f(hdr.ipv4.ttl); }",
                        decls="bit<8> f(inout bit<8> x) { return x; x = 1; }")
    assert any("unreachable code" in w for w in r.warnings)


def test_runtime_stack_index_becomes_a_chain_of_conditions() -> None:
    r = compile_program("""
        apply { hdr.items[meta.i].v = 7; }
    """, decls=STACK, meta="bit<8> i;", hdrs="item_t[3] items;")
    conds = pipeline(r)["conditionals"]
    assert len(conds) == 3
    exprs = [c["expression"]["value"] for c in conds]
    assert all(e["op"] == "==" and e["left"] == {"type": "field",
                                                  "value": ["scalars", "userMetadata.i"]}
               for e in exprs)
    assert sorted(int(e["right"]["value"], 16) for e in exprs) == [0, 1, 2]
    targets = {json.dumps(a["primitives"][0]["parameters"][0]) for a in r.json["actions"]
               if a["primitives"]}
    assert {json.dumps({"type": "field", "value": [f"items[{i}]", "v"]})
            for i in range(3)} <= targets


def test_runtime_index_expression_goes_through_hsivar() -> None:
    r = compile_program("""
        action a() { meta.x = hdr.items[meta.i + 1].v; }
        apply { a(); }
    """, decls=STACK, meta="bit<8> i; bit<8> x;", hdrs="item_t[2] items;")
    assert "hsiVar_0" in scalars(r)
    prims = action(r, "Ing.a")["primitives"]
    assert prims[0]["parameters"][0]["value"] == ["scalars", "hsiVar_0"]
    assert [p["op"] for p in prims].count("_jump_if_zero") == 2


def test_runtime_index_in_an_if_condition_and_in_a_parser() -> None:
    r = compile_program("""
        apply { if (hdr.items[meta.i].v == 1) { meta.x = 1; } else { meta.x = 2; } }
    """, decls=STACK, meta="bit<8> i; bit<8> x;", hdrs="item_t[2] items;", parser="""
        state start { pkt.extract(hdr.items.next); pkt.extract(hdr.items.next);
                      meta.x = hdr.items[meta.i].v; transition accept; }
    """)
    conds = pipeline(r)["conditionals"]
    assert conds[0]["expression"]["value"]["op"] == "and"
    states = [s["name"] for s in r.json["parsers"][0]["parse_states"]]
    assert len(states) > 2      # the parser state is split per index


CTRL = """
control Dec(inout ipv4_t ip)(bit<8> amount) {
    action d() { ip.ttl = ip.ttl - amount; }
    table t { key = { ip.dst: exact; } actions = { d; } }
    apply { t.apply(); }
}
control Cls(in bit<8> proto, out bit<8> cls) {
    table c { key = { proto: exact; } actions = { NoAction; } }
    apply { cls = 1; c.apply(); }
}
"""


def test_control_constructor_parameters_are_constants_per_instance() -> None:
    r = compile_program("""
        Dec(1) one; Dec(8w5) five;
        apply { if (hdr.ipv4.tos == 0) { one.apply(hdr.ipv4); } else { five.apply(hdr.ipv4); } }
    """, decls=CTRL)
    a1 = action(r, "Ing.one.d")["primitives"][0]["parameters"][1]["value"]["value"]
    a5 = action(r, "Ing.five.d")["primitives"][0]["parameters"][1]["value"]["value"]
    assert a1["left"]["value"]["right"]["value"] == "0xff"      # ttl + (256 - 1)
    assert a5["left"]["value"]["right"]["value"] == "0xfb"
    assert table(r, "Ing.one.t")["key"][0]["target"] == ["ipv4", "dst"]
    p4info_tables = {t.preamble.name for t in r.p4info.tables}
    assert {"Ing.one.t", "Ing.five.t"} <= p4info_tables


def test_sub_control_arguments_through_temporaries() -> None:
    r = compile_program("""
        Cls() cls;
        apply { cls.apply(hdr.ipv4.proto & 0x7f, hdr.ipv4.tos); }
    """, decls=CTRL)
    assert "proto_0" in scalars(r)          # an expression: copied in
    assert table(r, "Ing.cls.c")["key"][0]["target"] == ["scalars", "proto_0"]
    t = next(t for t in r.p4info.tables if t.preamble.name == "Ing.cls.c")
    assert t.match_fields[0].name == "proto"
    dump = json.dumps(r.json["actions"])
    assert '["ipv4", "tos"]' in dump          # the out argument is written directly


def test_sub_control_constructor_argument_errors() -> None:
    with pytest.raises(CompileError, match="constructor expects 1 arguments, got 0"):
        compile_program("Dec() d; apply { d.apply(hdr.ipv4); }", decls=CTRL)
    with pytest.raises(CompileError, match="compile-time constant"):
        compile_program("Dec(hdr.ipv4.ttl) d; apply { d.apply(hdr.ipv4); }", decls=CTRL)


def test_control_instance_as_constructor_argument_is_applied_in_place() -> None:
    decls = """
        control step_t(inout bit<8> x);
        control Inc(inout bit<8> x) { counter(4, CounterType.packets) hits;
                                      apply { hits.count(0); x = x + 1; } }
        control Wrap(inout bit<8> x)(step_t c) { apply { c.apply(x); c.apply(x); } }
    """
    r = compile_program("""
        Inc() inc; Wrap(inc) w1; Wrap(inc) w2;
        apply { w1.apply(hdr.ipv4.ttl); w2.apply(hdr.ipv4.tos); }
    """, decls=decls)
    # one instance, so one counter, however often it is applied
    assert [c["name"] for c in r.json["counter_arrays"]] == ["Ing.inc.hits"]
    assert "Ing.inc.hits" in {c.preamble.name for c in r.p4info.counters}
