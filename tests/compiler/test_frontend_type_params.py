"""Type parameters name a type only inside their own declaration (p4c's scoped
lexer): a program may call a constant or a local `T`, `H` or `M` although core.p4
and v1model.p4 use those names as type parameters."""

from __future__ import annotations

from pathlib import Path

from stf_on_switch import run_stf

from tests.v1model_program import v1model_program

PROGRAM = v1model_program(
    declarations="const bit<8> T = 3;\n"
                 "X first<X>(in X a, in X b) { return a; }\n"
                 "struct Pair<K> { K left; K right; }",
    h_fields="bit<8> f;",
    ingress="""
        bit<8> H = 1;
        bit<8> X = first(hdr.h.f, T);
        bit<8> K = X + H;
        hdr.h.f = K + T;
        sm.egress_spec = 1;
    """)


def test_names_of_type_parameters_are_free_outside_their_declarations(tmp_path: Path) -> None:
    p4 = tmp_path / "type_params.p4"
    p4.write_text(PROGRAM)
    p4.with_suffix(".stf").write_text("packet 0 05\nexpect 1 09\n")
    assert run_stf(p4) == 1
