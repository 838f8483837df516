"""Drop reasons come from the program the SM pushed: a DropReason enum in its bmv2 JSON
names them, its P4Info sizes the per-port block."""

from __future__ import annotations

import pytest

from controller import drop_reasons


def test_a_program_declaring_drop_reason_names_its_own_cells():
    program = {"enums": [{"name": "DropReason", "entries": [["NO_ROUTE", 0], ["STORM", 1]]}]}
    reasons = drop_reasons.of_program(program, per_port=4)
    assert reasons.split(4 * 3 + 1) == (3, "storm")
    assert reasons.split(4 * 3 + 2) == (3, "reason2")


def test_without_the_enum_fabric_p4s_names_with_the_programs_block_size():
    reasons = drop_reasons.of_program({"enums": []}, per_port=8)
    assert reasons.per_port == 8 and reasons.names[0] == "no_route" and reasons.names[2] == "tail"


def test_a_reason_that_does_not_fit_the_counter_is_refused():
    program = {"enums": [{"name": "DropReason", "entries": [["A", 0], ["B", 9]]}]}
    with pytest.raises(ValueError, match="'b' \\(9\\) does not fit the program's 8"):
        drop_reasons.of_program(program, per_port=8)


def test_fabric_p4_names_its_reasons_in_the_compiled_program_as_its_source_does():
    from pathlib import Path

    from p4compiler.compiler import compile_file

    fabric = Path(__file__).resolve().parents[2] / "p4src" / "fabric.p4"
    j = compile_file(str(fabric)).json
    assert any(e["name"] == "DropReason" for e in j["enums"])
    compiled = drop_reasons.of_program(j, per_port=8)
    assert compiled == drop_reasons.load()
    assert compiled.names[7] == "pkey" and compiled.names[6] == "link_down"
