"""Every tests/compiler/programs/fidelity program (P4 fidelity, issue 18: unions and
union stacks, list/struct comparisons, switch labels, value sets, varbit locals and
lengths, signed wrap, generic structs, struct constants, parameter defaults...;
expectations derived from the P4_16 spec) passes its STF on the embedded switch and,
with the same JSON, on real simple_switch where it is installed."""

from __future__ import annotations

import pytest
from fidelity_helpers import needs_bmv2, programs, run_on_bmv2, run_on_embedded


@pytest.mark.parametrize("stem", programs())
def test_program_passes_its_stf_on_the_embedded_switch(stem: str) -> None:
    assert run_on_embedded(stem) > 0


@needs_bmv2
@pytest.mark.parametrize("stem", programs())
def test_our_json_passes_the_same_stf_on_real_simple_switch(stem: str) -> None:
    run_on_bmv2(stem)
