"""Syntax-level desugaring: compound assignment, nested slices, for-loop unrolling."""

from __future__ import annotations

import pytest

from p4compiler import ir
from p4compiler.compiler import compile_text
from p4compiler.errors import CompileError
from p4compiler.preprocessor import Preprocessor
from p4compiler.syntax import parse
from tests.v1model_program import line_of, position_of, v1model_program


def body_of(stmts: str) -> ir.Block:
    program = parse(Preprocessor().run_text(v1model_program(ingress=stmts), "t.p4"))
    control = next(d for d in program.decls if getattr(d, "name", "") == "I")
    return control.body


def compile_error(stmts: str) -> CompileError:
    with pytest.raises(CompileError) as e:
        compile_text(v1model_program(ingress=stmts), "t.p4")
    return e.value


def test_compound_assignment_is_assignment_of_the_binary_operation() -> None:
    (stmt,) = body_of("hdr.h.a |+|= 3;").stmts
    assert isinstance(stmt, ir.Assign) and isinstance(stmt.rhs, ir.Binary)
    assert stmt.rhs.op == "|+|" and stmt.rhs.left == stmt.lhs


def test_nested_slice_becomes_one_slice_of_the_field() -> None:
    (stmt,) = body_of("hdr.h.a[7:4][1:0] = 2w3;").stmts
    assert isinstance(stmt.lhs, ir.Slice) and isinstance(stmt.lhs.expr, ir.Member)
    assert (stmt.lhs.hi.value, stmt.lhs.lo.value) == (5, 4)


def test_nested_slice_out_of_range_is_an_error() -> None:
    assert "out of range" in compile_error("hdr.h.a[3:0][5:4] = 2w3;").message


def test_for_loop_unrolls_into_one_copy_per_iteration() -> None:
    (block,) = body_of("for (bit<8> i = 0; i < 3; i = i + 1) { hdr.h.a = hdr.h.a + i; }").stmts
    assert isinstance(block.stmts[0], ir.VarDecl)
    assert len(block.stmts) == 1 + 3


def test_loop_counting_wraps_at_the_variable_width() -> None:
    # bit<2> i: 2, 3, then wraps to 0 and the loop ends.
    (block,) = body_of("for (bit<2> i = 2; i != 1; i = i + 1) { hdr.h.a = 1; }").stmts
    assert len(block.stmts) == 1 + 3


def test_break_and_continue_become_guard_flags() -> None:
    (block,) = body_of("for (bit<8> i in 0 .. 3) { if (i == 1) { continue; } "
                       "if (i == 2) { break; } hdr.h.a = i; }").stmts
    flags = [s.name for s in block.stmts if isinstance(s, ir.VarDecl)]
    assert len(flags) == 2 and flags[0].endswith("_break") and flags[1].endswith("_continue")


def _jumps(stmts: str) -> list[str]:
    """The jump primitives of the program's actions (a run-time loop's are there)."""
    j = compile_text(v1model_program(ingress=stmts), "t.p4").json
    return [p["op"] for a in j["actions"] for p in a["primitives"] if p["op"].startswith("_jump")]


def test_loop_with_runtime_bound_stays_a_loop_run_by_jumps() -> None:
    stmt = "for (bit<8> i = 0; i < hdr.h.b; i = i + 1) { hdr.h.a = i; }"
    (init, loop) = body_of(stmt).stmts[0].stmts
    # the initialiser runs once, before the loop, as an ordinary statement
    assert isinstance(init, ir.VarDecl) and init.name == "i"
    assert isinstance(loop, ir.Loop) and loop.init == ()
    assert loop.loc.line == line_of(v1model_program(ingress=stmt), stmt)
    assert _jumps(stmt) == ["_jump_if_zero", "_jump"]


def test_loop_that_never_ends_is_an_error() -> None:
    e = compile_error("for (bit<8> i = 0; i < 10; i = i) { hdr.h.a = i; }")
    assert "never ends" in e.message and "i = 0" in e.message


def test_loop_that_ends_only_by_break_is_a_run_time_loop() -> None:
    assert _jumps("for (bit<8> i = 0; i < 10; i = i) { hdr.h.a = hdr.h.a + 1; "
                  "if (hdr.h.a == hdr.h.b) { break; } }").count("_jump") == 2


def test_loop_variable_assigned_in_the_body_makes_a_run_time_loop() -> None:
    (_, loop) = body_of("for (bit<8> i = 0; i < 10; i = i + 1) { i = i + hdr.h.b; }"
                        ).stmts[0].stmts
    assert isinstance(loop, ir.Loop)


def test_for_in_loop_variable_assigned_in_the_body_changes_only_its_copy() -> None:
    # each iteration declares i anew from the range (what p4c computes for
    # jafingerhut's loop-var-in-range-modifiable-in-body1): assigning it does not
    # change the next value
    (block,) = body_of("for (bit<8> i in 1 .. 3) { i = i + 4; }").stmts
    starts = [s.stmts[0].init.value for s in block.stmts]
    assert starts == [1, 2, 3]


def test_for_in_range_with_bounds_known_at_run_time_is_a_run_time_loop() -> None:
    stmt = "for (bit<8> i in 1 .. hdr.h.a) { hdr.h.b = i; }"
    (block,) = body_of(stmt).stmts
    lo, hi, loop = block.stmts
    # the bounds are named after the loop's place, line and column
    line, column = position_of(v1model_program(ingress=stmt), stmt)
    assert (lo.name, hi.name) == (f"__for{line}_{column}_lo", f"__for{line}_{column}_hi")
    assert isinstance(loop, ir.Loop) and loop.body.stmts[0].name == "i"


def test_break_outside_a_loop_is_an_error() -> None:
    e = compile_error("break;")
    assert e.message == "break outside a for loop"
    assert e.loc.line == line_of(v1model_program(ingress="break;"), "break;")


def test_empty_action_list_gets_a_default_only_noaction() -> None:
    result = compile_text(v1model_program(
        ingress_locals="table t { key = { hdr.h.a : exact; } actions = {} }",
        ingress="t.apply();"), "t.p4")
    (table,) = [t for p in result.json["pipelines"] for t in p["tables"]]
    assert table["actions"] == ["NoAction"]
    (info,) = result.p4info.tables
    assert [r.scope for r in info.action_refs] == [2]  # DEFAULT_ONLY


def test_direct_type_invocation_declares_one_instance_per_type() -> None:
    text = v1model_program(declarations="control Sub(inout bit<8> x) { apply { } }",
                           ingress="Sub.apply(hdr.h.a); Sub.apply(hdr.h.b);")
    program = parse(Preprocessor().run_text(text, "t.p4"))
    control = next(d for d in program.decls if getattr(d, "name", "") == "I")
    (inst,) = [x for x in control.locals if isinstance(x, ir.Instantiation)]
    assert (inst.tref.name, inst.name) == ("Sub", "Sub_inst")
    assert all(s.call.callee.expr.name == "Sub_inst" for s in control.body.stmts)


def test_serializable_enum_keys_take_underlying_values_and_masks() -> None:
    text = v1model_program(
        declarations="enum bit<8> K { X = 0x12, Y = 0x34 }", h_fields="bit<8> a; K b;",
        ingress_locals="action set(bit<8> v) { hdr.h.a = v; }\n"
                       "table t { key = { hdr.h.b : ternary; } actions = { set; }\n"
                       "    const entries = { ((bit<8>)K.Y &&& 0xf0) : set(1); K.X : set(2); } }",
        ingress="t.apply();")
    result = compile_text(text, "t.p4")
    (table,) = [t for p in result.json["pipelines"] for t in p["tables"]]
    keys = [(e["match_key"][0]["key"], e["match_key"][0]["mask"]) for e in table["entries"]]
    assert keys == [("0x30", "0xf0"), ("0x12", "0xff")]


def test_for_in_over_something_that_is_not_a_stack_is_an_error() -> None:
    stmt = "for (bit<8> x in hdr.h.a) { hdr.h.b = x; }"
    e = compile_error(stmt)
    assert "expected a header stack, a tuple or a range" in e.message
    assert e.loc.line == line_of(v1model_program(ingress=stmt), stmt)


def test_errors_without_a_place_point_at_the_declaration_they_name() -> None:
    from p4compiler.compiler import _nearest_declaration

    text = v1model_program()
    source = Preprocessor().run_text(text, "t.p4")
    tree = parse(source)
    assert _nearest_declaration(tree, source, "h_t.b: not supported").line == \
        line_of(text, "header h_t {")
    assert _nearest_declaration(tree, source, "h: only stacks of headers").line == \
        line_of(text, "struct headers {")
    assert _nearest_declaration(tree, source, "I: something").line == line_of(text, "control I(")
    last = _nearest_declaration(tree, source, "no main")
    assert (last.file, last.line) == ("t.p4", line_of(text, "V1Switch("))


def test_missing_main_points_into_the_compiled_file() -> None:
    with pytest.raises(CompileError) as info:
        compile_text(v1model_program().replace(
            "V1Switch(P(), V(), I(), E(), C(), D()) main;", ""), "t.p4")
    assert info.value.loc.file == "t.p4" and info.value.loc.line > 0


def test_unrolling_is_deterministic_across_compiles() -> None:
    text = v1model_program(ingress="for (bit<8> i in 0 .. 3) { if (i == hdr.h.b) { break; } "
                                   "hdr.h.a = hdr.h.a + i; }")
    assert compile_text(text, "t.p4").json == compile_text(text, "t.p4").json


def test_pragma_annotation_body_runs_to_the_end_of_the_line() -> None:
    text = v1model_program(ingress_locals="@pragma my_tool some (unbalanced tokens\n"
                                          "action a1() { hdr.h.b = 1; }", ingress="a1();")
    program = parse(Preprocessor().run_text(text, "t.p4"))
    control = next(d for d in program.decls if getattr(d, "name", "") == "I")
    (action,) = [x for x in control.locals if isinstance(x, ir.ActionDecl)]
    assert [a.name for a in action.annotations] == ["my_tool"]


def test_struct_defaults_need_a_struct_or_header_type() -> None:
    e = compile_error("hdr.h.a = { a = 1, ... };")
    assert "remaining fields of a struct or header" in e.message


def test_a_struct_expression_names_every_field_once() -> None:
    assert "missing: b" in compile_error("hdr.h = { a = 1 };").message
    assert "given twice" in compile_error("hdr.h = { a = 1, a = 2, ... };").message


def test_nested_loops_that_would_unroll_too_far_stay_loops() -> None:
    # 1000 x 1000 copies would not fit: the outer loop stays a loop (its body, the inner
    # loop of 1000 iterations, is kept as a loop too: it would unroll to 1000 copies)
    jumps = _jumps("for (bit<16> i = 0; i < 1000; i = i + 1) { "
                   "for (bit<16> j = 0; j < 1000; j = j + 1) { hdr.h.a = hdr.h.a + 1; } }")
    assert jumps.count("_jump_if_zero") >= 1


def test_a_field_named_type_is_not_a_type_declaration() -> None:
    # `h.eth.type : optional;` once declared `optional` as a type name.
    from p4compiler.lexer import scan_type_names
    assert "optional" not in scan_type_names("key = { h.eth.type : optional; h.x. type: exact; }")
    assert {"T", "U"} <= scan_type_names("type bit<8> T; typedef bit<4> U;").keys()


def test_a_name_is_a_type_only_from_its_declaration_on() -> None:
    # v1model.p4 declares the extern function verify_checksum and hash<O, T, D, M>
    # before the program's control verify_checksum and struct M (p4c accepts both).
    text = v1model_program().replace("control V(", "control verify_checksum(").replace(
        "V(), I()", "verify_checksum(), I()").replace("meta_t", "M")
    compile_text(text, "t.p4")


def test_older_v1model_programs_declare_their_own_port_id_type() -> None:
    # PortId_t is v1model's only from V1MODEL_VERSION 20200408 on.
    mine = v1model_program(declarations="struct PortId_t { bit<9> v; }",
                           metadata="PortId_t p;", ingress="m.p.v = sm.ingress_port;")
    compile_text(mine, "t.p4")
    theirs = "#define V1MODEL_VERSION 20200408\n" + v1model_program(
        metadata="PortId_t p;", ingress="m.p = sm.ingress_port;")
    compile_text(theirs, "t.p4")


def test_contextual_keywords_name_variables_in_expressions() -> None:
    body = body_of("bit<8> type = hdr.h.a; bit<8> key = type; hdr.h.b = key + type;")
    assert isinstance(body.stmts[2].rhs.left, ir.Name) and body.stmts[2].rhs.left.name == "key"


def test_annotated_block_statement_is_the_block() -> None:
    body = body_of("@atomic { hdr.ipv4.ttl = 1; } @a @b { }")
    assert isinstance(body.stmts[0], ir.Block) and len(body.stmts[0].stmts) == 1
    assert isinstance(body.stmts[1], ir.Block) and not body.stmts[1].stmts


def _with_table(entries: str, props: str = "") -> str:
    return v1model_program(
        ingress_locals="action set(bit<8> v) { hdr.h.a = v; }\n"
                       f"table t {{ key = {{ hdr.h.b : ternary; }} actions = {{ set; }} {props}\n"
                       f"    {entries} }}",
        ingress="t.apply();")


def _priorities(entries: str, props: str = "") -> list[int]:
    result = compile_text(_with_table(entries, props), "t.p4")
    (table,) = [t for p in result.json["pipelines"] for t in p["tables"]]
    return [e["priority"] for e in table["entries"]]


def test_entry_priorities_follow_the_spec_and_become_bmv2_ranks() -> None:
    # largest wins (default): 10, 9, 20 -> bmv2 ranks (smallest wins) 11, 12, 1
    assert _priorities("entries = { priority=10: 1 : set(1); 2 : set(2); "
                       "priority=20: 3 : set(3); }") == [11, 12, 1]
    # smallest wins, delta 10: 5, 15, 25 as they are
    assert _priorities("entries = { priority=5: 1 : set(1); 2 : set(2); 3 : set(3); }",
                       "largest_priority_wins = false; priority_delta = 10;") == [5, 15, 25]
    # none given: source order, whatever largest_priority_wins says
    assert _priorities("entries = { 1 : set(1); 2 : set(2); }",
                       "largest_priority_wins = false;") == [1, 2]


@pytest.mark.parametrize("entries, props, message", [
    ("const entries = { priority=3: 1 : set(1); }", "", "cannot give entry priorities"),
    ("entries = { 1 : set(1); priority=3: 2 : set(2); }", "", "first entry must have"),
    ("entries = { priority=1: 1 : set(1); 2 : set(2); 3 : set(3); }", "",
     "would be -1"),
    ("entries = { priority=1: 1 : set(1); }", "largest_priority_wins = 3;",
     "true or false"),
])
def test_bad_entry_priorities_are_errors(entries: str, props: str, message: str) -> None:
    with pytest.raises(CompileError) as e:
        compile_text(_with_table(entries, props), "t.p4")
    assert message in e.value.message


@pytest.mark.parametrize("text", [
    # a prototype's parameter named like a type shadows nothing after the `;`
    "extern void f(in bit<8> counter);\n"
    "control X() { counter(4, CounterType.packets) c; apply { c.count(0); } }",
    # a typedef's name is a type, an object's name in a nested block ends with it
    "typedef bit<8> my_t;\n"
    "control X() { apply { { my_t counter = 1; counter = counter + 1; } } }\n"
    "control Y() { counter(4, CounterType.packets) c; apply { my_t x = 0; c.count((bit<32>)x); } }",
    # a field named like its type is no object: the type stays usable in the struct
    "typedef bit<48> mac_t;\nstruct s_t { mac_t mac_t; mac_t other; }\n"
    "header h2_t { bit<8> counter; bit<8> b; }\n"
    "control X() { counter(4, CounterType.packets) c; apply { s_t v; v.other = 1; } }",
    # a for-in loop variable
    "control X() { apply { bit<8> s = 0; for (bit<8> meter in 1 .. 3) { s = s + meter; } } }",
])
def test_names_shadowing_types_are_scoped(text: str) -> None:
    # p4c's lexer asks its scoped symbol table: an object named like a type is the
    # object only inside its scope, so the type is usable again after it
    parse(Preprocessor().run_text("#include <core.p4>\n#include <v1model.p4>\n" + text, "t.p4"))
