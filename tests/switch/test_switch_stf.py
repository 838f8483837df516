"""The compiler's STF packet tests (tests/compiler/programs/*.stf) run on the switch:
each program compiled by the embedded compiler, entries installed through the
Dataplane API, packets through Switch.process(), outputs checked per port."""

from __future__ import annotations

from pathlib import Path

import pytest
from stf_inprocess import PROGRAMS, run_stf_in_process

STF_FILES = sorted(PROGRAMS.glob("*.stf")) if PROGRAMS.is_dir() else []


@pytest.mark.parametrize("mode", ["process", "fast"])
@pytest.mark.parametrize("stf", STF_FILES, ids=[p.stem for p in STF_FILES])
def test_stf_program_on_the_switch(stf: Path, mode: str):
    run_stf_in_process(stf, mode)
