"""The frontend's differential programs (tests/differential/programs/fe_*.p4 + .stf):
each compiled by the embedded compiler and its STF packets run in-process on the
embedded switch (the differential harness runs the same pairs on real p4c/bmv2)."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

from p4compiler import stf as stf_format
from p4compiler.compiler import compile_file
from p4switch.switch import Switch

PROGRAMS = Path(__file__).resolve().parents[1] / "differential" / "programs"
STF_FILES = sorted(PROGRAMS.glob("fe_*.stf"))


def run_stf(stf: Path) -> None:
    """Packets in, expected packets out per port, in order, nothing extra."""
    program = compile_file(str(stf.with_suffix(".p4"))).json
    sw = Switch({p: f"p{p}" for p in range(8)}, cpu_port=510)
    sw.load_program(program)
    outputs: dict[int, list[bytes]] = defaultdict(list)
    for c in stf_format.parse_file(stf).commands:
        if isinstance(c, stf_format.Packet):
            for port, data in sw.process(c.port, c.data):
                outputs[port].append(data)
        elif isinstance(c, stf_format.Expect):
            where = f"{stf.name}:{c.line}"
            got = outputs[c.port]
            if c.pattern is None:
                assert got == [], f"{where}: unexpected output on port {c.port}"
                continue
            assert got, f"{where}: nothing came out of port {c.port}"
            data = got.pop(0)
            assert c.matches(data), f"{where}: port {c.port} got {data.hex()}"
        else:
            raise AssertionError(f"{stf.name}: command {type(c).__name__} not used by fe_ programs")
    assert not any(outputs.values()), f"{stf.name}: unexpected packets {dict(outputs)}"


def test_there_are_frontend_programs() -> None:
    assert len(STF_FILES) >= 5


@pytest.mark.parametrize("stf", STF_FILES, ids=[p.stem for p in STF_FILES])
def test_frontend_program_runs_as_the_spec_says(stf: Path) -> None:
    run_stf(stf)
