"""InlineActions, LocalInitializers and HoistTableApplies on the typed IR and in the
artifacts: what the back end and the control plane see after the mid end."""

from __future__ import annotations

from p4compiler import ir
from p4compiler.compiler import compile_text
from p4compiler.typecheck import _walk

HEAD = """
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; bit<8> c; }
struct headers { h_t h; }
struct metadata { }
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; } }
control VC(inout headers hdr, inout metadata meta) { apply { } }
"""
TAIL = """
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), Ig(), Eg(), CC(), D()) main;
"""


def compile_ingress(body: str):
    return compile_text(HEAD + "control Ig(inout headers hdr, inout metadata meta, "
                        "inout standard_metadata_t sm) {" + body + "}" + TAIL)


def _action_calls(node) -> list[str]:
    return [n.call.target[1].name for n in _walk(node)
            if isinstance(n, ir.CallStmt) and n.call.target and n.call.target[0] == "action"]


def test_direct_call_with_unaliased_inout_uses_the_argument_itself():
    r = compile_ingress("""
        action inc(inout bit<8> x) { x = x + 1; }
        apply { inc(hdr.h.a); }
    """)
    body = r.typed.blocks["ig"].body
    assert _action_calls(body) == []
    (update,) = [s for s in _walk(body) if isinstance(s, (ir.VarDecl, ir.Assign))]
    assert ir.dump(update.lhs) == ir.dump(update.rhs.left)      # hdr.h.a = hdr.h.a + 1
    assert all(a["name"] != "Ig.inc" for a in r.json["actions"])


def test_direct_call_with_aliased_inout_copies_in_and_out():
    r = compile_ingress("""
        action inc(inout bit<8> x) { x = x + 1; hdr.h.b = hdr.h.a; }
        apply { inc(hdr.h.a); }
    """)
    stmts = [s for s in _walk(r.typed.blocks["ig"].body)
             if isinstance(s, (ir.VarDecl, ir.Assign))]
    decl, update, _read, copy_out = stmts
    assert isinstance(decl, ir.VarDecl) and decl.name == "x_0"
    assert ir.dump(decl.init) == ir.dump(copy_out.lhs)          # copy-in from hdr.h.a
    assert isinstance(update.lhs, ir.Name) and update.lhs.name == "x_0"
    assert isinstance(copy_out.rhs, ir.Name) and copy_out.rhs.name == "x_0"


def test_table_binding_keeps_only_action_data_in_json_and_p4info():
    r = compile_ingress("""
        action setbyte(out bit<8> reg, bit<8> val) { reg = val; }
        table t1 { key = { hdr.h.a : exact; } actions = { setbyte(hdr.h.b); } }
        table t2 { key = { hdr.h.a : exact; } actions = { setbyte(hdr.h.c); } }
        apply { t1.apply(); t2.apply(); }
    """)
    copies = [a for a in r.json["actions"] if a["name"] == "Ig.setbyte"]
    assert len(copies) == 2                       # one per binding, as p4c's copies
    assert all(a["runtime_data"] == [{"name": "val", "bitwidth": 8}] for a in copies)
    info = next(a for a in r.p4info.actions if a.preamble.name == "Ig.setbyte")
    assert [p.name for p in info.params] == ["val"]
    tables = {t["name"]: t for p in r.json["pipelines"] for t in p["tables"]}
    assert tables["Ig.t1"]["action_ids"][0] != tables["Ig.t2"]["action_ids"][0]


def test_control_local_initialiser_runs_first_in_apply():
    r = compile_ingress("""
        bit<8> k = 8w9;
        apply { hdr.h.a = k; }
    """)
    first = r.typed.blocks["ig"].body.stmts[0]
    assert isinstance(first, ir.VarDecl) and first.init is not None
    assert first.init.value == 9


def test_hit_inside_expression_is_hoisted_into_a_temporary():
    r = compile_ingress("""
        table t { key = { hdr.h.a : exact; } actions = { NoAction; } }
        apply { hdr.h.b = t.apply().hit ? 8w1 : 8w2; }
    """)
    stmts = r.typed.blocks["ig"].body.stmts
    assert isinstance(stmts[0], ir.VarDecl) and stmts[0].name.startswith("tmp_")
    assert isinstance(stmts[0].init, ir.Member) and stmts[0].init.member == "hit"
    assert isinstance(stmts[-1], ir.Assign) and isinstance(stmts[-1].rhs, ir.Mux)


def test_default_action_binding_other_arguments_is_a_clear_error():
    import pytest

    from p4compiler.errors import CompileError
    with pytest.raises(CompileError, match="same directional arguments"):
        compile_ingress("""
            action setbyte(out bit<8> reg, bit<8> val) { reg = val; }
            table t { key = { hdr.h.a : exact; } actions = { setbyte(hdr.h.b); }
                      default_action = setbyte(hdr.h.c, 1); }
            apply { t.apply(); }
        """)


def test_table_action_without_its_directional_arguments_is_a_clear_error():
    import pytest

    from p4compiler.errors import CompileError
    with pytest.raises(CompileError, match="directional arguments"):
        compile_ingress("""
            action setbyte(out bit<8> reg, bit<8> val) { reg = val; }
            table t { key = { hdr.h.a : exact; } actions = { setbyte; } }
            apply { t.apply(); }
        """)
