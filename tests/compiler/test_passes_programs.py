"""The mid-end passes' differential programs (tests/differential/programs/ctl_*.p4),
compiled and run in-process on the embedded switch against their STF expectations."""

from __future__ import annotations

from pathlib import Path

import pytest
from stf_on_switch import run_stf

PROGRAMS = Path(__file__).resolve().parents[1] / "differential" / "programs"
CTL = sorted(PROGRAMS.glob("ctl_*.p4"))


def test_every_ctl_program_has_an_stf():
    assert CTL, "no ctl_* programs found"
    assert all(p.with_suffix(".stf").is_file() for p in CTL)


@pytest.mark.parametrize("p4", CTL, ids=[p.stem for p in CTL])
def test_ctl_program_gives_the_expected_packets(p4: Path):
    assert run_stf(p4) > 0
