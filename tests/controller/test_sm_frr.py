"""The SM installs primary + backup ports where the pipeline has fast reroute."""

from __future__ import annotations

import pytest

from controller.lids import LidMap
from controller.p4info import P4Info
from controller.p4runtime_client import SwitchConnection
from controller.routing import engine
from controller.sm import SubnetManager, frr_action
from topologies.generators import build


@pytest.fixture
def leafspine_sm(fake_fabric_switches):
    fabric = build("leafspine:2,2,2")  # s1, s2 leaves; s3, s4 spines
    conns = {}
    for sw in fabric.switches:
        _server, address = fake_fabric_switches(sw.name)
        conns[sw.name] = SwitchConnection(sw.name, address, device_id=sw.device_id)
    sm = SubnetManager(fabric, conns, engine=engine("ftree"), lid_map=LidMap())
    yield sm
    sm.close()


def test_frr_action_is_found_by_its_two_port_parameters(p4info_path, frr_p4info_path):
    assert frr_action(P4Info.from_file(p4info_path)) is None
    action = frr_action(P4Info.from_file(frr_p4info_path))
    assert action.name == "FabricIngress.forward_frr"
    assert [p.name for p in action.params] == ["primary", "backup"]


def test_leaf_routes_get_the_other_uplink_as_backup(leafspine_sm, frr_p4info_path, bmv2_json):
    sm = leafspine_sm
    sm.bring_up(frr_p4info_path, bmv2_json)
    held = sm.read_route_entries("s1")
    remote = [sm.lids[h] for h in ("h3", "h4")]
    for dlid in remote:
        primary, backup = held[dlid]
        assert {primary, backup} == {3, 4}  # the two uplinks, one each way
    for dlid in (sm.lids["h1"], sm.lids["h2"]):
        assert held[dlid][1] is None  # delivered on a host port: plain forward
    spine = sm.read_route_entries("s3")
    assert all(backup is None for _p, backup in spine.values())  # downward: no LFA
    assert all(c.writes == 0 for c in sm.install_routes().values())


def test_without_the_frr_action_routes_are_plain_forwards(leafspine_sm, p4info_path, bmv2_json):
    sm = leafspine_sm
    sm.bring_up(p4info_path, bmv2_json)
    assert all(backup is None for name in sm.connections
               for _p, backup in sm.read_route_entries(name).values())
    assert sm.read_routes("s1") == dict(sm.routes["s1"])


def test_a_changed_backup_alone_is_rewritten_as_one_modify(leafspine_sm, frr_p4info_path,
                                                           bmv2_json):
    sm = leafspine_sm
    sm.bring_up(frr_p4info_path, bmv2_json)
    dlid = sm.lids["h3"]
    backups = {name: dict(t) for name, t in sm.backups.items()}
    del backups["s1"][dlid]
    changes = sm.install_routes(sm.routes, backups)
    assert (changes["s1"].modified, changes["s1"].writes) == (1, 1)
    assert sm.read_route_entries("s1")[dlid][1] is None


def test_liveness_is_one_default_entry_mask_and_never_a_register(fake_switch, frr_p4info_path,
                                                                  bmv2_json):
    from controller.liveness import Liveness, read_down_ports

    server, address = fake_switch
    with SwitchConnection("s1", address, device_id=1) as conn:
        conn.set_pipeline(frr_p4info_path, bmv2_json)
        assert read_down_ports(conn) == set()
        liveness = Liveness(conn)
        liveness.set(3, up=False)
        liveness.set(5, up=False)
        assert read_down_ports(conn) == {3, 5}
        Liveness(conn).set(3, up=True)  # a new writer (agent restart) starts from the switch
        assert read_down_ports(conn) == {5}
    assert server.register_writes == []


def test_min_hop_on_a_ring_gets_two_vls_in_the_address_book_and_sl_to_vl(
        fake_fabric_switches, frr_p4info_path, bmv2_json, tmp_path):
    import json

    fabric = build("ring:5")
    servers, conns = {}, {}
    for sw in fabric.switches:
        servers[sw.name], address = fake_fabric_switches(sw.name)
        conns[sw.name] = SwitchConnection(sw.name, address, device_id=sw.device_id)
    sm = SubnetManager(fabric, conns, engine=engine("minhop"), lid_map=LidMap())
    try:
        sm.bring_up(frr_p4info_path, bmv2_json, tmp_path / "book.json")
        book = json.loads((tmp_path / "book.json").read_text())
        assert {h["sl"] for h in book["hosts"].values()} == {0, 1}
        info = P4Info.from_file(frr_p4info_path)
        sl_table = info.table("FabricIngress.sl_to_vl").id
        for server in servers.values():
            sl_entries = [e for e in server.entries.values() if e.table_id == sl_table]
            assert len(sl_entries) == 1  # SL 1 -> VL 1; SL 0 is the default action
        sm.bring_up(frr_p4info_path, bmv2_json)  # again: nothing duplicated
    finally:
        sm.close()


def test_deadlock_free_engines_keep_every_host_on_sl_0(leafspine_sm, frr_p4info_path,
                                                       bmv2_json):
    sm = leafspine_sm
    sm.bring_up(frr_p4info_path, bmv2_json)
    assert sm.vl_of == {} and {h["sl"] for h in sm.address_book()["hosts"].values()} == {0}


def test_the_sm_and_the_agent_never_write_a_register(fake_fabric_switches, frr_p4info_path,
                                                     bmv2_json):
    """bmv2's P4Runtime server refuses register writes (UNIMPLEMENTED), and so do the fake
    switches here: bring-up, a port going down (the agent's write) and the global reroute
    after it go through tables only. (Flow control's writes, LOSSY queue limit included,
    go through the embedded switch, which refuses register writes too, in
    tests/fabric/test_p4runtime_contract.py.)"""
    from controller.agent import CarrierEvent, LocalAgent, PortEvent, connect_agent

    fabric = build("leafspine:2,2,1")
    servers, conns = {}, {}
    for sw in fabric.switches:
        servers[sw.name], address = fake_fabric_switches(sw.name)
        conns[sw.name] = SwitchConnection(sw.name, address, device_id=sw.device_id)
    sm = SubnetManager(fabric, conns, engine=engine("ftree"), lid_map=LidMap())
    try:
        sm.bring_up(frr_p4info_path, bmv2_json)
        reports: list[PortEvent] = []
        agent = LocalAgent("s1", connect_agent("s1", conns["s1"].address, 1, frr_p4info_path),
                           {"lo": 2}, reports.append)
        try:
            [event] = [agent.handle(CarrierEvent("lo", False, 1))]
        finally:
            agent.watcher.close()
            agent.conn.close()
        assert event.error == "" and reports == [event]
        sm.handle_port_event(event)
    finally:
        sm.close()
    assert {name: s.register_writes for name, s in servers.items()} == \
        {name: [] for name in servers}
    assert sum(s.updates_seen for s in servers.values()) > 0
