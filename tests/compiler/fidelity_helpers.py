"""Runs a tests/compiler/programs/fidelity program's STF: compiled by the embedded
compiler, on the embedded switch in-process, or on real simple_switch (the same
JSON, so both switches must agree on what our compiler emits)."""

from __future__ import annotations

from pathlib import Path

import pytest
from stf_on_switch import run_stf

from p4compiler import stf as stf_format
from p4compiler.compiler import compile_file
from p4switch.stf_bmv2 import find_tool, run_bmv2

PROGRAMS = Path(__file__).resolve().parent / "programs" / "fidelity"

needs_bmv2 = pytest.mark.skipif(find_tool("simple_switch") is None
                                or find_tool("simple_switch_CLI") is None,
                                reason="real bmv2 simple_switch is not installed")


def programs() -> list[str]:
    """Stems of every fidelity program with an STF beside it."""
    return sorted(p.stem for p in PROGRAMS.glob("*.p4") if p.with_suffix(".stf").exists())


def run_on_embedded(stem: str) -> int:
    """Packets checked on the embedded switch (AssertionError on a mismatch)."""
    return run_stf(PROGRAMS / f"{stem}.p4")


def run_on_bmv2(stem: str) -> None:
    """The embedded compiler's JSON on real simple_switch; AssertionError on a mismatch."""
    p4 = PROGRAMS / f"{stem}.p4"
    script = stf_format.parse_file(p4.with_suffix(".stf"))
    outcome = run_bmv2(compile_file(str(p4)).json, script, f"{stem}.stf", timeout=60)
    assert not outcome.mismatches, "\n".join(outcome.mismatches)
