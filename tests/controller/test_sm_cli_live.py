"""`fabriclab-sm status` and `routes` against embedded switch processes on loopback
(no interfaces): the compiled fabric.p4 pushed by an SM that stays primary while the
read-only subcommands look at the switches. Fixtures are in conftest.py."""

from __future__ import annotations

import json

import pytest

from controller import flow_control
from controller.cli import main
from controller.lids import LidMap
from controller.liveness import Liveness
from controller.p4runtime_client import SwitchConnection
from controller.routing import engine
from controller.sm import ROUTE_KEY, ROUTE_TABLE, SM_ELECTION_ID, SubnetManager
from topologies.generators import build


def _switch_args(switches: dict[str, tuple[str, int]]) -> list[str]:
    return [arg for name, (address, _dev) in sorted(switches.items())
            for arg in ("--switch", f"{name}={address}")]


@pytest.fixture
def leafspine_sm(switch_processes, compiled_fabric):
    """leafspine:2,2,1 (leaves s1, s2; spines s3, s4) on four switch processes, brought up
    by an SM (ftree: every leaf uplink route has the other uplink as backup)."""
    fabric = build("leafspine:2,2,1")
    switches = switch_processes({s.name: s.device_id for s in fabric.switches})
    conns = {name: SwitchConnection(name, address, dev, SM_ELECTION_ID)
             for name, (address, dev) in switches.items()}
    sm = SubnetManager(fabric, conns, engine=engine("ftree"), lid_map=LidMap())
    sm.bring_up(*compiled_fabric)
    yield sm, switches
    sm.close()


def test_status_reports_every_switch_without_taking_it_from_the_sm(leafspine_sm, capsys):
    sm, switches = leafspine_sm
    s1 = sm.connections["s1"]
    Liveness(s1).set(3, up=False)
    s1.write(flow_control.updates(s1, flow_control.FlowControlParams(
        mode=flow_control.Mode.PFC, xoff=8, xon=4), {}, constants=sm.constants)[:1])
    assert main(["status", "leafspine:2,2,1", *_switch_args(switches), "--json"]) == 0
    report = {s["switch"]: s for s in json.loads(capsys.readouterr().out)["switches"]}
    assert set(report) == {"s1", "s2", "s3", "s4"}
    for name, s in report.items():
        assert s["reachable"] and s["tables"] >= 4 and s["error"] is None
        held = sm.read_route_entries(name)
        assert s["routes"] == len(held) > 0
        assert s["frr_routes"] == sum(b is not None for _p, b in held.values())
        assert s["drops"] == []
    assert report["s1"]["frr_routes"] > 0
    assert report["s1"]["ports_down"] == [3] and report["s2"]["ports_down"] == []
    assert report["s1"]["flow_control"]["mode"] == "PFC"
    assert report["s1"]["flow_control"]["xoff"] == 8
    assert report["s2"]["flow_control"]["mode"] == "LOSSY"
    # the SM is still primary everywhere: its writes go through
    Liveness(s1).set(3, up=True)
    assert all(c.writes == 0 for c in sm.install_routes(sm.routes, sm.backups).values())
    assert main(["status", "leafspine:2,2,1", *_switch_args(switches)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 4 and lines[0].startswith("s1 (127.0.0.1:")
    assert "flow control PFC (xoff=8, xon=4" in lines[0] and "ports down none" in lines[0]


def test_routes_follows_the_tables_and_flags_loops_and_blackholes(leafspine_sm, capsys):
    sm, switches = leafspine_sm
    args = ["routes", "leafspine:2,2,1", "h2", *_switch_args(switches)]
    assert main(args) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"DLID {sm.lids['h2']} (h2)"
    up = sm.routes["s1"][sm.lids["h2"]]
    spine, _ = {2: ("s3", 1), 3: ("s4", 1)}[up]
    other = {2: 3, 3: 2}[up]
    assert f"s1: s1:{up} -> {spine}:2 -> s2:1 -> h2" in out
    other_spine = "s4" if spine == "s3" else "s3"
    assert f"  with s1:{up} down: s1:{other} -> {other_spine}:2 -> s2:1 -> h2" in out
    assert "s2: s2:1 -> h2" in out and "s3: s3:2 -> s2:1 -> h2" in out

    # a spine sending h2's frames back down to s1: s1 -> spine -> s1 is a loop
    conn, info = sm.connections[spine], sm.connections[spine].p4info
    conn.write([conn.modify(info.table_entry(ROUTE_TABLE, {ROUTE_KEY: sm.lids["h2"]},
                                             "FabricIngress.forward", {"port": 1}))])
    assert main(args) == 1
    out = capsys.readouterr().out
    assert f"s1: s1:{up} -> {spine}:1 -> s1  [LOOP: back at s1]" in out
    conn.write([conn.delete(info.table_entry(ROUTE_TABLE, {ROUTE_KEY: sm.lids["h2"]}))])
    assert main([*args, "--json"]) == 1
    paths = {p["switch"]: p for p in json.loads(capsys.readouterr().out)["paths"]}
    assert paths[spine]["problem"] == f"BLACKHOLE: {spine} has no route to {sm.lids['h2']}"
    assert paths["s1"]["backup"]["problem"] is None  # the other spine still delivers


def test_unreachable_and_pipeline_less_switches_are_one_line_each(switch_processes,
                                                                   compiled_fabric, capsys):
    switches = switch_processes({"s1": 1, "s2": 2})
    with SwitchConnection("s1", switches["s1"][0], 1, SM_ELECTION_ID) as conn:
        conn.set_pipeline(*compiled_fabric)
    assert main(["status", "line:2", *_switch_args(switches)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("s1 (") and "pipeline v1model program with" in out[0]
    assert out[1] == f"s2 ({switches['s2'][0]}): reachable, NO PIPELINE loaded"
    dead = dict(switches, s2=("127.0.0.1:1", 2))
    assert main(["status", "line:2", *_switch_args(dead), "--timeout", "0.3"]) == 1
    captured = capsys.readouterr()
    out = captured.out.splitlines()
    assert len(out) == 2 and out[0].startswith("s1 (") and "routes 0 (frr 0)" in out[0]
    assert out[1] == "s2 (127.0.0.1:1): UNREACHABLE: no P4Runtime server at 127.0.0.1:1 " \
                     "after 0.3s"
    assert captured.err == ""
    assert main(["routes", "line:2", "2", *_switch_args(switches)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert "s1: s1  [BLACKHOLE: s1 has no route to 2]" in out
    assert "s2: not read: no pipeline loaded" in out
