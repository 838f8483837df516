"""P4Info of both compilers, field by field (issue 17): the comparator itself on the
embedded compiler's P4Info of fabric.p4 (identical to itself, and every kind of change
is reported), and, where p4c is installed, the two compilers' P4Info of every program
of the corpus."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from harness import FABRIC, compile_with, programs
from p4info_diff import diff, load


@pytest.fixture(scope="module")
def fabric_info(tmp_path_factory) -> Path:
    _json, info = compile_with("embedded", FABRIC, tmp_path_factory.mktemp("p4info"))
    return info


def test_a_p4info_equals_itself(fabric_info):
    assert diff(load(fabric_info), load(fabric_info)) == []


def test_every_kind_of_difference_is_reported(fabric_info):
    a, b = load(fabric_info), load(fabric_info)
    t = next(t for t in b.tables if t.match_fields)  # fabric.p4 has keyless tables too
    t.match_fields[0].match_type = 3 if t.match_fields[0].match_type != 3 else 2
    b.actions[0].preamble.id += 1
    b.actions[1].preamble.annotations.append("@hidden")
    b.tables[1].size += 1
    del b.counters[0]
    d = diff(a, b)
    name = t.preamble.name
    assert any(x.startswith(f"tables[{name}].match_fields[") and "match_type" in x for x in d)
    assert any(x.startswith(f"actions[{a.actions[0].preamble.name}].preamble.id") for x in d)
    assert any("preamble.annotations" in x for x in d)
    assert any(x.startswith(f"tables[{a.tables[1].preamble.name}].size") for x in d)
    assert f"counters[{a.counters[0].preamble.name}]: only in the first" in d


def test_maps_are_compared_by_key_and_value():
    from p4.config.v1 import p4info_pb2

    a, b = p4info_pb2.P4Info(), p4info_pb2.P4Info()
    for m in (a, b):
        h = m.type_info.headers["h_t"]
        h.members.add(name="f").type_spec.bit.bitwidth = 8
    b.type_info.headers["h_t"].members[0].type_spec.bit.bitwidth = 9
    b.type_info.serializable_enums["E"].underlying_type.bitwidth = 8
    assert diff(a, b) == [
        "type_info.headers[h_t].members[f].type_spec.bit.bitwidth: 8 != 9",
        "type_info.serializable_enums[E]: only in the second"]


PROGS = programs()


@pytest.mark.skipif(shutil.which("p4c") is None, reason="p4c is not installed")
@pytest.mark.parametrize("p4", PROGS, ids=[p.stem for p in PROGS])
def test_both_compilers_give_the_same_p4info(p4: Path, tmp_path):
    _, ours = compile_with("embedded", p4, tmp_path / "embedded")
    _, theirs = compile_with("p4c", p4, tmp_path / "p4c")
    d = diff(load(ours), load(theirs))
    assert not d, "\n".join(d)
