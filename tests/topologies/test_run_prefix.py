"""Every run names its interfaces with its own prefix, so two runs share a machine."""

from __future__ import annotations

import json
import random

import pytest

from topologies import link_names
from topologies.generators import build
from topologies.ledger import PREFIX_LENGTH, PREFIX_PATTERN, Ledger, allocate_prefix
from topologies.network import interface_names


def test_each_ledger_gets_its_own_prefix(tmp_path):
    a, b = Ledger.create("run-a", tmp_path), Ledger.create("run-b", tmp_path)
    assert a.prefix != b.prefix
    for ledger in (a, b):
        assert PREFIX_PATTERN.fullmatch(ledger.prefix) and len(ledger.prefix) == PREFIX_LENGTH
        assert Ledger.load(ledger.path).prefix == ledger.prefix
        ledger.teardown()


def test_a_prefix_held_by_a_ledger_is_not_handed_out_again(tmp_path):
    held = allocate_prefix(tmp_path, random.Random(7))
    (tmp_path / "other.json").write_text(json.dumps({"prefix": held}))
    assert allocate_prefix(tmp_path, random.Random(7)) != held


def test_interface_names_carry_the_prefix_and_fit_linux():
    fabric = build("fattree:8")  # the largest names: h128, s80
    names = interface_names(fabric, "fk3-")
    assert all(n.startswith("fk3-") and len(n) <= link_names.IFNAMSIZ for n in names)
    assert "fk3-s1-eth1" in names and len(set(names)) == len(names)


def test_a_name_too_long_for_linux_is_refused_with_what_made_it():
    with pytest.raises(link_names.LinkNameError, match="19 characters; Linux allows 15"):
        link_names.kernel_interface("fk3-", "host12345", 12)


def test_two_runs_with_one_run_id_keep_a_ledger_each(tmp_path):
    # two runs of one scenario started in the same second (different results directories)
    a, b = Ledger.create("20261204-234437-stream", tmp_path), \
        Ledger.create("20261204-234437-stream", tmp_path)
    assert a.path != b.path and a.path.exists() and b.path.exists()
    assert b.path.name == "20261204-234437-stream-2.json"
    a.interfaces.append("x")
    a.save()
    assert Ledger.load(b.path).interfaces == []
    assert not list(tmp_path.glob("*.tmp"))
