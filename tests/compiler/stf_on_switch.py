"""Run a program's STF script in-process: the embedded compiler, then the embedded
switch (p4switch.stf_runner, fabriclab-stf's rules); a mismatch is an AssertionError
naming the STF line."""

from __future__ import annotations

from pathlib import Path

from p4compiler import stf as stf_format
from p4compiler.compiler import compile_file
from p4switch.stf_runner import run_embedded


def run_stf(p4: Path) -> int:
    """Compile `p4`, run `p4` with suffix .stf; returns the number of packets checked."""
    j = compile_file(str(p4)).json
    script = stf_format.parse_file(p4.with_suffix(".stf"))
    outcome = run_embedded(j, script, f"{p4.stem}.stf")
    assert not outcome.mismatches, "\n".join(outcome.mismatches)
    return sum(1 for c in script.commands
               if isinstance(c, stf_format.Expect) and c.pattern is not None)
