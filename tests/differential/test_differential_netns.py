"""Differential testing (issue 17): every program/STF pair of tests/differential/programs
and tests/compiler/programs, plus fabric.p4, through the four (compiler, switch)
combinations of harness.py: each combination present here must meet the STF
expectations, and all of them must put out the same frames, packet for packet.

(a) p4c + bmv2 and (b) p4c + embedded switch skip where p4c is absent; (c) embedded
compiler + bmv2 where simple_switch_grpc is absent. Root tests (network namespace,
veths, raw sockets); the file name puts them under the emulation lock (conftest).
One switch process per kind serves every program (a new pipeline per program).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from harness import (
    COMBINATIONS,
    Lab,
    all_ports,
    compare,
    compile_with,
    missing_tool,
    programs,
    stf_for,
)
from stf_profiles_p4rt import NoStandIn

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("ip") is None,
    reason="differential tests need root and iproute2 (network namespace, veths, raw sockets)")

PROGRAMS = programs()


def _scripts() -> dict[Path, object]:
    from p4compiler import stf as stf_format

    return {p: stf_format.parse_file(stf_for(p)) for p in PROGRAMS}


SCRIPTS = _scripts()


@pytest.fixture(scope="module")
def labs(tmp_path_factory):
    """Switch processes by kind, started on first use (inside a test, so under the
    emulation lock) and stopped at the end of the module."""
    started: dict[str, Lab] = {}
    workdir = tmp_path_factory.mktemp("differential")

    def get(switch: str) -> Lab:
        lab = started.get(switch)
        if lab is not None and lab.alive() is not None:  # it died on an earlier program
            lab.stop()
            lab = None
        if lab is None:
            lab = Lab(switch, all_ports(SCRIPTS.values()), workdir)
            lab.start()
            started[switch] = lab
        return lab

    try:
        yield get
    finally:
        for lab in started.values():
            lab.stop()


# Known divergences, each a bug to fix (strict: the mark fails once the bug is gone).
KNOWN: dict[str, str] = {}


def _no_stand_in(p4: Path) -> str | None:
    """Why this harness cannot run the script, or None. It writes over P4Runtime
    (action profile members and groups too: tests/parity/stf_profiles_p4rt.py) and has
    no stand-in for simple_switch_CLI's runtime commands other than mirroring_add,
    `remove NAME`, meter_set_rates, counter_write and counter_reset; fabriclab-stf --switch both
    checks those programs on the embedded switch and on real bmv2 through
    simple_switch_CLI."""
    from p4compiler import stf as stf_format

    for c in SCRIPTS[p4].commands:
        if isinstance(c, stf_format.Control) and c.op not in ("mirroring_add", "wait",
                                                              "no_packet", "remove_entry",
                                                              "meter_set_rates",
                                                              "meter_get_rates",
                                                              "counter_write",
                                                              "counter_reset"):
            return f"STF command {c.op}: checked by fabriclab-stf --switch both"
    return None


def _marked(p4: Path):
    if (skip := _no_stand_in(p4)) is not None:
        return pytest.param(p4, id=p4.stem, marks=[pytest.mark.skip(reason=skip)])
    why = KNOWN.get(p4.stem)
    # seen only beside real bmv2 (the STF's prefix match lets the extra bytes pass)
    seen = shutil.which("simple_switch_grpc") is not None
    return pytest.param(p4, id=p4.stem, marks=[pytest.mark.xfail(seen, reason=why, strict=True)]
                        if why else [])


@pytest.mark.parametrize("p4", [_marked(p) for p in PROGRAMS])
def test_program_agrees_on_every_combination(p4: Path, labs, tmp_path):
    script = SCRIPTS[p4]
    results, errors, compiled = {}, [], {}
    for combo, (compiler, switch) in COMBINATIONS.items():
        if missing_tool(combo):
            continue
        if compiler not in compiled:
            try:
                compiled[compiler] = compile_with(compiler, p4, tmp_path / compiler)
            except RuntimeError as e:
                compiled[compiler] = e
        if isinstance(compiled[compiler], RuntimeError):
            errors.append(f"({combo}) {compiled[compiler]}")
            continue
        lab = labs(switch)
        try:
            results[combo] = res = lab.run(*compiled[compiler], script, p4.name)
        except NoStandIn as e:
            pytest.skip(str(e))
        except Exception as e:  # noqa: BLE001 - a refused pipeline or a dead switch
            died = lab.alive()
            errors.append(f"({combo}) {type(e).__name__}: {e}" +
                          (f"\n  the switch died: {died}" if died else ""))
            continue
        errors += [f"({combo}) {x}" for x in res.errors]
    if not results and not errors:
        pytest.skip("no combination can run here: " +
                    "; ".join(filter(None, map(missing_tool, COMBINATIONS))))
    diffs = compare(results, script)
    assert not errors and not diffs, "\n".join(errors + diffs)
