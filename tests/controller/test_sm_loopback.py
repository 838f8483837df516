"""The SM against real switch processes on loopback: the embedded compiler's artifacts
pushed to two embedded switches (no interfaces), routes installed and read back.

Skipped until the embedded compiler (p4compiler.cli) and switch (p4switch.cli) exist.
The fixtures (`compiled_fabric`, `two_switches`) are in conftest.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.lids import LidMap
from controller.p4info import P4Info
from controller.p4runtime_client import NotPrimaryError, SwitchConnection
from controller.sm import SM_ELECTION_ID, SubnetManager
from topologies.generators import build

HAND_WRITTEN_P4INFO = Path(__file__).resolve().parent / "data" / "fabric.p4info.txtpb"


def test_compiled_p4info_has_what_the_sm_and_the_hand_written_copy_use(compiled_fabric):
    compiled = P4Info.from_file(compiled_fabric[0])
    hand = P4Info.from_file(HAND_WRITTEN_P4INFO)
    for table in ("FabricIngress.dlid_route",):
        a, b = compiled.table(table), hand.table(table)
        assert [(f.name, f.bitwidth, f.match_type) for f in a.match_fields] == \
            [(f.name, f.bitwidth, f.match_type) for f in b.match_fields]
        assert a.size == b.size
    for action in ("FabricIngress.forward", "FabricIngress.no_route"):
        assert [(p.name, p.bitwidth) for p in compiled.action(action).params] == \
            [(p.name, p.bitwidth) for p in hand.action(action).params]
    for counter in ("FabricIngress.drop_counter", "FabricIngress.rx_port_counter"):
        assert compiled.counter(counter).size == hand.counter(counter).size
    for header in ("packet_in", "packet_out"):
        assert compiled.packet_metadata(header) == hand.packet_metadata(header)


def test_sm_brings_up_two_switches_and_reinstalls_nothing(compiled_fabric, two_switches,
                                                           tmp_path):
    fabric = build("line:2")
    conns = {name: SwitchConnection(name, address, device_id, SM_ELECTION_ID)
             for name, (address, device_id) in two_switches.items()}
    try:
        sm = SubnetManager(fabric, conns, lid_map=LidMap(tmp_path / "guid2lid.json"))
        changes = sm.bring_up(*compiled_fabric, tmp_path / "book.json")
        assert {n: c.inserted for n, c in changes.items()} == {"s1": 3, "s2": 3}
        for name in conns:
            assert sm.read_routes(name) == sm.routes[name]
            assert sm.read_drop_counters(name) == {}
        restarted = SubnetManager(fabric, conns, lid_map=LidMap(tmp_path / "guid2lid.json"))
        restarted.assign_lids()  # reads the switches' tables back instead of rewriting them
        assert all(c.writes == 0 for c in restarted.install_routes().values())
    finally:
        for conn in conns.values():
            conn.close()


def test_arbitration_against_the_embedded_switch(two_switches):
    address, device_id = two_switches["s1"]
    with SwitchConnection("s1", address, device_id, SM_ELECTION_ID):
        with pytest.raises(NotPrimaryError, match=r"s1: not primary .*\(2, 0\)"):
            SwitchConnection("s1", address, device_id, (0, 1))
