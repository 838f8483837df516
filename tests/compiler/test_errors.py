"""Bad programs: one clear `file:line:col: error: ...`, never a traceback."""

from __future__ import annotations

import pytest
from p4c_helpers import compile_program, program

from p4compiler.compiler import compile_text
from p4compiler.errors import CompileError
from tests.v1model_program import line_of, v1model_program


def error_of(ingress: str, **kw: str) -> CompileError:
    with pytest.raises(CompileError) as e:
        compile_program(ingress, **kw)
    return e.value


def test_width_mismatch_in_assignment_is_located() -> None:
    ingress = "apply { hdr.ipv4.ttl = hdr.ipv4.len; }"
    err = error_of(ingress)
    assert "cannot implicitly cast bit<16> to bit<8>" in err.message
    assert err.loc.line == line_of(program(ingress), "hdr.ipv4.ttl = hdr.ipv4.len")
    assert str(err).startswith(f"test.p4:{err.loc.line}:")


def test_width_mismatch_in_arithmetic() -> None:
    err = error_of("apply { hdr.ipv4.ttl = hdr.ipv4.ttl + hdr.ipv4.len; }")
    assert "different types bit<8> and bit<16>" in err.message


def test_undeclared_name() -> None:
    err = error_of("apply { hdr.ipv4.ttl = nosuch; }")
    assert "nosuch: undeclared name" in err.message


def test_unknown_field() -> None:
    err = error_of("apply { hdr.ipv4.nosuch = 1; }")
    assert "nosuch: no such field in ipv4_t" in err.message


def test_wrong_argument_count_for_action() -> None:
    err = error_of("action a(bit<8> x) { hdr.ipv4.ttl = x; } apply { a(1, 2); }")
    assert "a: expects 1 arguments, got 2" in err.message


def test_wrong_argument_count_for_extern_method() -> None:
    err = error_of("register<bit<8>>(4) r; apply { r.write(1); }")
    assert "register.write: expects 2 arguments, got 1" in err.message


def test_wrong_argument_count_for_extern_function() -> None:
    err = error_of("apply { mark_to_drop(sm, sm); }")
    assert "mark_to_drop: expects 0 or 1 arguments, got 2" in err.message


def test_an_optional_extern_parameter_may_be_left_out() -> None:
    # P4_16 14.1: the call is well-formed; what stops it is that bmv2 has no such extern
    err = error_of("Ext() e; apply { hdr.ipv4.ttl = e.get(hdr.ipv4.ttl); }",
                   decls="extern Ext { Ext(); bit<8> get(in bit<8> x, "
                         "@optional in bool flag); }")
    assert "Ext.get() cannot be used in an expression on bmv2" in err.message
    err = error_of("Ext() e; apply { hdr.ipv4.ttl = e.get(); }",
                   decls="extern Ext { Ext(); bit<8> get(in bit<8> x, "
                         "@optional in bool flag); }")
    assert "Ext.get: expects 2 arguments, got 0" in err.message


def test_table_applied_twice_with_different_successors() -> None:
    err = error_of("""
        table t { key = { hdr.ipv4.dst: exact; } actions = { NoAction; } }
        apply { t.apply(); hdr.ipv4.ttl = 1; t.apply(); }
    """)
    assert "applied more than once" in err.message


def test_assigning_an_in_parameter_is_rejected() -> None:
    err = error_of("action a(in bit<8> x) { x = 1; } apply { a(hdr.ipv4.ttl); }")
    assert "read-only" in err.message


def test_if_condition_must_be_bool() -> None:
    err = error_of("apply { if (hdr.ipv4.ttl) { hdr.ipv4.ttl = 1; } }")
    assert "must be bool" in err.message


def test_default_action_must_be_listed() -> None:
    err = error_of("""
        action a() { }
        table t { key = { hdr.ipv4.dst: exact; } actions = { NoAction; } default_action = a(); }
        apply { t.apply(); }
    """)
    assert "not in the actions list" in err.message


def test_unknown_match_kind() -> None:
    err = error_of("""
        table t { key = { hdr.ipv4.dst: fuzzy; } actions = { NoAction; } }
        apply { t.apply(); }
    """)
    assert "fuzzy: unknown match kind" in err.message


def test_unknown_parser_state() -> None:
    with pytest.raises(CompileError) as e:
        compile_program(parser="state start { transition nowhere; }")
    assert "nowhere: no parser state" in e.value.message


def test_syntax_error_points_at_the_token() -> None:
    with pytest.raises(CompileError) as e:
        compile_text("#include <v1model.p4>\nheader h_t { bit<8> f }\n", "bad.p4")
    assert (e.value.loc.file, e.value.loc.line) == ("bad.p4", 2)
    assert "syntax error" in e.value.message


def test_error_in_included_file_names_that_file(tmp_path) -> None:
    (tmp_path / "inc.p4").write_text("\n\nconst bit<8> X = nosuch;\n")
    src = tmp_path / "main.p4"
    src.write_text('#include <v1model.p4>\n#include "inc.p4"\n')
    from p4compiler.compiler import compile_file

    with pytest.raises(CompileError) as e:
        compile_file(str(src))
    assert e.value.loc.file.endswith("inc.p4") and e.value.loc.line == 3


def test_missing_main() -> None:
    with pytest.raises(CompileError) as e:
        compile_text("#include <v1model.p4>\n", "nomain.p4")
    assert "no 'main'" in e.value.message


def test_deprecated_extern_gives_a_warning() -> None:
    r = compile_program("apply { mark_to_drop(); }")
    assert any("deprecated" in w for w in r.warnings)


@pytest.mark.parametrize("snippet", [
    "apply { hdr.ipv4.ttl = 1 }",                      # missing ;
    "apply { hdr.ipv4.ttl = (bit<8>)hdr.ipv4; }",     # cast of a header
    "apply { hdr.ipv4.ttl = hdr.ipv4.ttl[9:0]; }",    # slice out of range
    "apply { hdr.ipv4.ttl = 1 / 0; }",                # division by zero
    "apply { hdr.ipv4.setValid(1); }",                # builtin arity
    "apply { hdr.ethernet = hdr.ipv4; }",             # header type mismatch
    "apply { exit; hdr.ipv4 }",                       # garbage
    "table t { actions = { nosuch; } } apply { t.apply(); }",
])
def test_bad_programs_raise_compile_errors_not_crashes(snippet: str) -> None:
    with pytest.raises(CompileError):
        compile_program(snippet)


def warnings_of(ingress: str, **kw: str) -> list[str]:
    return compile_program(ingress, **kw).warnings


def test_uninitialized_local_and_out_parameter_warn() -> None:
    w = warnings_of("""
        apply { bit<8> x; if (hdr.ipv4.ttl == 1) { x = 2; } hdr.ipv4.tos = x; }
    """)
    assert any("x may be uninitialized" in m for m in w)
    w = warnings_of("apply { bit<8> y; if (hdr.ipv4.ttl == 1) { y = 2; } else { y = 3; } "
                    "hdr.ipv4.tos = y; }")
    assert not any("uninitialized" in m for m in w)
    w = warnings_of("apply { bit<8> c; f(hdr.ipv4.ttl, c); hdr.ipv4.tos = c; }",
                    decls="void f(in bit<8> a, out bit<8> b) { if (a == 0) { b = 1; } }")
    assert any("out parameter b may be uninitialized" in m for m in w)


def test_locals_written_by_a_table_action_are_not_reported() -> None:
    w = warnings_of("""
        bit<9> port;
        action set(bit<9> p) { sm.egress_spec = p; }
        table t { key = { hdr.ipv4.dst: exact; } actions = { set; } }
        apply { bit<8> v; t.apply(); if (hdr.ipv4.isValid()) { v = 1; } else { exit; }
                hdr.ipv4.ttl = v; }
    """)
    assert not any("uninitialized" in m for m in w)


def test_unreachable_code_after_exit_warns() -> None:
    w = warnings_of("apply { exit; hdr.ipv4.ttl = 1; }")
    assert any("unreachable code" in m for m in w)


def test_table_with_only_noaction_warns() -> None:
    w = warnings_of("""
        table t { key = { hdr.ipv4.dst: exact; } actions = { NoAction; } }
        apply { t.apply(); }
    """)
    assert any("t: table has no actions other than NoAction" in m for m in w)


def test_shift_by_the_width_or_more_warns() -> None:
    w = warnings_of("apply { hdr.ipv4.ttl = hdr.ipv4.ttl << 8; }")
    assert any("shifting a value with 8 bits by 8" in m for m in w)


def test_int_literal_that_does_not_fit_warns_and_wraps_as_in_p4c() -> None:
    # p4c's IR::Constant overflow check is a warning (WARN_OVERFLOW) and the value
    # wraps: `(bit<8>)(4 / 1w1)` compiles to 0 in p4c's own tests.
    w = warnings_of("apply { hdr.ipv4.ttl = 257; }")
    assert any("257: value does not fit in 8 bits (bit<8>), it wraps to 1" in m for m in w)
    compile_program("apply { hdr.ipv4.ttl = 255; meta.s = -1; }", meta="int<8> s;")


def test_comparing_a_header_to_a_struct_is_an_error() -> None:
    e = error_of("apply { if (hdr.ipv4 == meta) { exit; } }", meta="bit<8> x;")
    assert "different types" in e.message


def test_a_block_in_the_wrong_v1switch_place_is_named_not_a_crash() -> None:
    # found by fuzzing p4c's samples: the deparser passed as the ingress crashed the back
    # end (an AssertionError); p4c refuses it when it unifies the control types
    good = v1model_program(h_fields="bit<8> f;")
    text = good.replace("V(), I(), E()", "V(), D(), E()")
    with pytest.raises(CompileError) as e:
        compile_text(text, "roles.p4")
    assert e.value.loc.line == line_of(text, "control D(")
    assert "D cannot be V1Switch's ingress: it must take (inout H, inout M, inout " \
           "standard_metadata_t)" in e.value.message
    # `in H` where V1Switch declares `inout H` is refused at the parameter, as p4c's
    # unification does ("Cannot unify 'in' parameter 'hdr' with 'inout' parameter 'hdr'
    # because they have different directions": p4_16_bmv_errors/issue376-bmv2.p4)
    compile_text(good, "roles.p4")
    good = good.replace("control V(inout headers", "control V(in headers")
    with pytest.raises(CompileError) as e:
        compile_text(good, "roles.p4")
    assert e.value.loc.line == line_of(good, "control V(")
    assert "V: cannot unify 'in' parameter 'hdr' with V1Switch's 'inout' parameter of " \
           "its checksum verification, because they have different directions" \
        in e.value.message
    compile_text(good.replace("control V(in headers", "control V(inout headers"), "roles.p4")
    # the deparser's `in H` is V1Switch's own direction; `inout` there is refused too
    with pytest.raises(CompileError) as e:
        compile_text(good.replace("control V(in headers", "control V(inout headers")
                     .replace("packet_out pkt, in headers", "packet_out pkt, inout headers"),
                     "roles.p4")
    assert "D: cannot unify 'inout' parameter 'hdr' with V1Switch's 'in' parameter" \
        in e.value.message


@pytest.mark.parametrize("elem", ["pair_t", "bool", "ipv4_t", "color_t"])
def test_a_register_of_anything_but_bits_is_refused_at_its_declaration(elem: str) -> None:
    # p4c's bmv2 back end refuses the instance ("Only registers with bit or int types are
    # currently supported"), declared alone or read into a struct: a read of a struct
    # register was refused at the read with "cannot assign to this expression", and a
    # bool, header or plain enum register compiled into JSON p4c never writes
    # (found by jafingerhut/p4-guide's v1model-p4runtime-most-types3.p4)
    decls = "struct pair_t { bit<8> a; bit<8> b; } enum color_t { R, G }"
    ingress = f"register<{elem}>(4) r;\n apply {{ }}"
    e = error_of(ingress, decls=decls)
    assert f"register<{elem}>: only registers with bit<W> or int<W> cells" in e.message
    assert e.loc.line == line_of(program(ingress, decls=decls), "register<")


def test_a_register_of_a_type_or_serializable_enum_over_bits_is_accepted() -> None:
    # p4c's mid end turns both into their bit<W> before the back end looks
    decls = "type bit<12> vid_t; enum bit<4> prio_t { LO = 1, HI = 2 }"
    r = compile_program("register<vid_t>(4) r1; register<prio_t>(4) r2;\n apply { }",
                        decls=decls)
    assert sorted(a["bitwidth"] for a in r.json["register_arrays"]) == [4, 12]
