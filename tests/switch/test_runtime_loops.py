"""A run-time loop (a for loop the compiler could not unroll) that never ends: bmv2 would
spin for ever; the embedded switch drops that packet with an error naming the action,
and goes on with the next one."""

from __future__ import annotations

from pathlib import Path

from p4compiler import stf
from p4compiler.compiler import compile_text
from p4switch.stf_runner import run_embedded

PROGRAM = (Path(__file__).parent / "data" / "endless_loop.p4")


def test_an_endless_loop_drops_its_packet_with_an_error_and_the_next_one_passes(capsys):
    j = compile_text(PROGRAM.read_text(), "endless_loop.p4").json
    script = stf.parse("packet 0 0105\nexpect 1 0105\n"    # i += 1: ends
                            "packet 0 0005\n"                   # i += 0: never ends
                            "packet 0 0203\nexpect 1 0203\n", "t.stf")
    outcome = run_embedded(j, script, "t.stf")
    assert [m for m in outcome.mismatches if "failed processing" in m] == \
        ["t.stf:3: the switch failed processing this packet (see its message on stderr)"]
    assert [f.hex() for f in outcome.outputs[1]] == ["0105", "0203"]
    assert "a loop that does not end" in capsys.readouterr().err
