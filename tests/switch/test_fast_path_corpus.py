"""The data-plane thread's per-packet function (the fused fast path where the program
has one) against the general path (Switch.process), on every program of the STF
corpora: the same frames out of the same ports, byte for byte.

The STF expectations alone cannot catch a fast-path divergence: they match by prefix,
so a frame with extra bytes at its end passes them (fe_serenum_mask did, until the
inlined header read in a parser state moved the parser's cursor)."""

from __future__ import annotations

from pathlib import Path

import pytest

from p4compiler import stf
from p4switch import switch as switch_module
from p4switch.stf_runner import StfRunError, compile_program, run_embedded

TESTS = Path(__file__).resolve().parents[1]
CORPORA = [TESTS / "differential" / "programs", TESTS / "compiler" / "programs"]
PROGRAMS = [p for d in CORPORA for p in sorted(d.glob("*.p4")) if p.with_suffix(".stf").exists()]


@pytest.mark.parametrize("specialised", [False, True], ids=["generic", "specialised"])
@pytest.mark.parametrize("p4", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_fast_path_puts_out_what_the_general_path_does(p4: Path, specialised: bool,
                                                        monkeypatch):
    """`specialised`: with the configuration tables' default entries baked into the
    fused function as they stand before each packet (Switch.specialise_now)."""
    # one still clock for both runs: timestamps (link_monitor's) agree
    monkeypatch.setattr(switch_module.time, "monotonic", lambda: 1000.0)
    try:
        j = compile_program(str(p4), [str(d) for d in CORPORA])
    except StfRunError as e:
        pytest.fail(f"{p4.name}: {e}")
    script = stf.parse_file(str(p4.with_suffix(".stf")))
    general = run_embedded(j, script, p4.name)
    fast = run_embedded(j, script, p4.name, fast=True, specialised=specialised)
    for port in sorted(set(general.outputs) | set(fast.outputs)):
        g, f = general.outputs.get(port, []), fast.outputs.get(port, [])
        assert [x.hex() for x in f] == [x.hex() for x in g], f"port {port}"
    assert fast.mismatches == general.mismatches
