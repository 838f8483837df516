"""LID assignment: deterministic, stable across SM restarts, bounded by the unicast space."""

from __future__ import annotations

import json

import pytest

from controller.lids import LID_MAX, LidMap, LidMapError, LidSpaceExhausted
from topologies.description import Fabric, Link, Node, NodeKind


def fabric_of(hosts: int, switches: int = 1, guid_base: int = 0x100) -> Fabric:
    nodes = [Node(f"h{i}", NodeKind.HOST, guid_base + i) for i in range(1, hosts + 1)]
    nodes += [Node(f"s{i}", NodeKind.SWITCH, 0x10_0000 + i, device_id=i)
              for i in range(1, switches + 1)]
    links = [Link("s1", i, f"h{i}", 0) for i in range(1, hosts + 1)]
    return Fabric(f"star:{hosts}", tuple(nodes), tuple(links))


def test_fresh_fabric_gets_hosts_by_name_then_switches():
    lids = LidMap().assign(fabric_of(hosts=11, switches=2))
    assert [lids[f"h{i}"] for i in range(1, 12)] == list(range(1, 12))  # h2 before h10
    assert (lids["s1"], lids["s2"]) == (12, 13)


def test_lids_survive_a_restart_and_new_nodes_take_free_lids(tmp_path):
    path = tmp_path / "guid2lid.json"
    first = LidMap(path).assign(fabric_of(hosts=3))
    assert json.loads(path.read_text())["guid2lid"]
    grown = fabric_of(hosts=4)  # h4 joins: everybody else keeps their LID
    second = LidMap(path).assign(grown)
    assert {k: second[k] for k in first} == first
    assert second["h4"] == 5


def test_refuses_more_than_the_unicast_space():
    with pytest.raises(LidSpaceExhausted, match="0xBFFF"):
        LidMap().assign(fabric_of(hosts=LID_MAX, switches=1))


def test_exactly_the_unicast_space_fits():
    lids = LidMap().assign(fabric_of(hosts=LID_MAX - 1, switches=1))
    assert max(lids.values()) == LID_MAX


def test_corrupt_map_is_a_clear_error(tmp_path):
    path = tmp_path / "guid2lid.json"
    path.write_text("{not json")
    with pytest.raises(LidMapError, match="guid2lid"):
        LidMap(path)
