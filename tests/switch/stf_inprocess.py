"""Run a program's STF script on the embedded switch in-process: compiled by the
embedded compiler, entries through the Dataplane API, packets through
Switch.process() (or the fast path), outputs checked per port."""

from __future__ import annotations

from pathlib import Path

import pytest

from p4switch.stf_runner import run_embedded

PROGRAMS = Path(__file__).resolve().parents[1] / "compiler" / "programs"


def _compile(p4: Path, skip_if_refused: bool = True) -> dict:
    try:
        from p4compiler.compiler import compile_file
    except ImportError as e:
        pytest.skip(f"embedded compiler not available: {e}")
    try:
        return compile_file(str(p4), include_dirs=[str(PROGRAMS)]).json
    except Exception as e:  # noqa: BLE001 - the compiler is developed in parallel
        if not skip_if_refused:
            raise
        pytest.skip(f"compiler cannot compile {p4.name} yet: {e}")


def run_stf_in_process(stf: Path, mode: str, skip_if_refused: bool = True,
                       transform=None) -> None:
    """Compile stf's program, run the script with fabriclab-stf's rules (p4switch.stf_runner)
    through Switch.process() (`mode` "process") or the fast path ("fast"), assert on every
    expectation. `transform`, if given, edits the bmv2 JSON before the switch loads it."""
    from p4compiler import stf as stf_format

    j = _compile(stf.with_suffix(".p4"), skip_if_refused)
    if transform is not None:
        transform(j)
    outcome = run_embedded(j, stf_format.parse_file(stf), stf.name, fast=mode == "fast")
    assert not outcome.mismatches, "\n".join(outcome.mismatches)
