"""switch statements: what p4c accepts and how it orders labels (the fidelity/switch_*
programs run in test_fidelity_programs)."""

from __future__ import annotations

from fidelity_helpers import PROGRAMS

from p4compiler.compiler import compile_file


def test_a_label_after_default_is_a_warning_as_in_p4c() -> None:
    r = compile_file(str(PROGRAMS / "switch_labels.p4"))
    warnings = [str(w) for w in r.warnings if "label following default label" in str(w)]
    assert len(warnings) == 2                    # one per switch, at the label after default
    assert all(":33:13:" in w or ":39:13:" in w for w in warnings), warnings


def test_action_run_labels_after_default_keep_their_own_block() -> None:
    j = compile_file(str(PROGRAMS / "switch_labels.p4")).json
    (t,) = [t for p in j["pipelines"] for t in p["tables"] if t["name"] == "I.t"]
    nt = t["next_tables"]
    assert nt["I.a"] == nt["I.b"]                 # a: b: { ... } share one block
    assert len({nt["I.a"], nt["I.c"], nt["I.d"]}) == 3  # c's own block, d the default's
