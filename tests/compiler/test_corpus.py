"""The corpus: classic tutorial-style programs (written for fabriclab) compile, and
their STF scripts name tables, actions, keys and parameters that exist."""

from __future__ import annotations

from pathlib import Path

import pytest
from p4c_helpers import PROGRAMS

from p4compiler import stf
from p4compiler.compiler import compile_file

CORPUS = sorted(p for p in PROGRAMS.glob("*.p4") if p.name != "common_headers.p4")
CORPUS.append(PROGRAMS / "fabric_snapshot" / "fabric.p4")


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.parent.name + "/" + p.stem
                         if p.parent != PROGRAMS else p.stem)
def test_corpus_program_compiles(path: Path) -> None:
    r = compile_file(str(path))
    assert r.json["pipelines"][0]["name"] == "ingress"
    assert r.p4info.pkg_info.arch == "v1model"


def test_every_tutorial_behaviour_is_in_the_corpus() -> None:
    names = {p.stem for p in CORPUS}
    assert {"basic_ipv4", "tunnel", "ecn", "source_routing", "calc", "load_balance",
            "multicast", "packet_io", "link_monitor"} <= names


@pytest.mark.parametrize("script", sorted(PROGRAMS.glob("*.stf")), ids=lambda p: p.stem)
def test_stf_scripts_match_their_programs(script: Path) -> None:
    program = script.with_suffix(".p4")
    info = compile_file(str(program)).p4info
    tables = {t.preamble.name: t for t in info.tables}
    actions = {a.preamble.name: a for a in info.actions}
    commands = stf.parse_file(script).commands
    assert any(isinstance(c, stf.Packet) for c in commands)
    for c in commands:
        if isinstance(c, (stf.AddEntry, stf.SetDefault)):
            assert c.table in tables, c
            assert c.action.name in actions, c
            params = [p.name for p in actions[c.action.name].params]
            assert [n for n, _ in c.action.params] == params, c
            if isinstance(c, stf.AddEntry):
                assert [k.name for k in c.keys] == [m.name for m in tables[c.table].match_fields]
