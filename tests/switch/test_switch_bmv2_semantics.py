"""The switch behaves as bmv2's simple_switch where the two used to differ: the sw_*
programs of the differential corpus (tests/differential/programs), compiled by the
embedded compiler and run in-process, each with its STF expectations (derived from the
P4_16 specification and bmv2's documentation, and checked on real bmv2 by the
differential harness where simple_switch_grpc is installed)."""

from __future__ import annotations

from pathlib import Path

import pytest
from stf_inprocess import run_stf_in_process

CORPUS = Path(__file__).resolve().parents[1] / "differential" / "programs"
SW_STF = sorted(CORPUS.glob("sw_*.stf"))


@pytest.mark.parametrize("mode", ["process", "fast"])
@pytest.mark.parametrize("stf", SW_STF, ids=[p.stem for p in SW_STF])
def test_switch_semantics_program(stf: Path, mode: str):
    run_stf_in_process(stf, mode, skip_if_refused=False)
