"""Runs a differential program's STF on the embedded switch in-process
(p4switch.stf_runner, fabriclab-stf's rules)."""

from __future__ import annotations

from pathlib import Path

from stf_on_switch import run_stf

PROGRAMS = Path(__file__).resolve().parents[1] / "differential" / "programs"


def _run_stf(stem: str) -> None:
    """Compile PROGRAMS/<stem>.p4 and check its STF packets."""
    run_stf(PROGRAMS / f"{stem}.p4")
