"""Runs a ty_* differential program's STF on the embedded switch in-process (the
types/parsers helper's programs use no table entries)."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from p4compiler import stf as stf_format
from p4compiler.compiler import compile_file
from p4switch.switch import Switch

PROGRAMS = Path(__file__).resolve().parents[1] / "differential" / "programs"


def _run_stf(stem: str) -> None:
    """Compile PROGRAMS/<stem>.p4 and check its STF packets (no table entries used)."""
    j = compile_file(str(PROGRAMS / f"{stem}.p4")).json
    script = stf_format.parse_file(PROGRAMS / f"{stem}.stf")
    sw = Switch({p: f"p{p}" for p in range(8)}, cpu_port=510)
    sw.load_program(j)
    outputs: dict[int, list[bytes]] = defaultdict(list)
    for c in script.commands:
        kind = type(c).__name__
        if kind == "Packet":
            for port, data in sw.process(c.port, c.data):
                outputs[port].append(data)
        elif kind == "Expect":
            got = outputs[c.port]
            if c.pattern is None:
                assert got == [], f"line {c.line}: unexpected {got[0].hex()}"
            else:
                assert got, f"line {c.line}: nothing on port {c.port}"
                data = got.pop(0)
                assert c.matches(data), f"line {c.line}: port {c.port} got {data.hex()}"
        else:
            raise AssertionError(f"{kind} not handled by this runner")
    assert not any(outputs.values()), f"unexpected {dict(outputs)}"
