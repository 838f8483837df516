"""`fabriclab-sm route` and `topology` offline, `up` against in-memory switches, routes'
`trace`, and the live subcommands' bad input (no switch needed)."""

from __future__ import annotations

import json

import pytest

from controller.cli import main, trace
from controller.lids import LidMap
from topologies.generators import build


def test_route_json_reports_the_fabric_and_a_complete_table(capsys):
    assert main(["route", "fattree:4", "--engine", "minhop", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["hosts"], out["switches"], out["engine"]) == (16, 20, "minhop")
    assert out["entries"] == 20 * 35 and out["unrouted_entries"] == 0
    assert out["seconds"] >= 0 and out["peak_memory_mb"] > 0


def test_route_dump_has_lids_and_tables(tmp_path, capsys):
    dump = tmp_path / "routes.json"
    assert main(["route", "line:2", "--dump-routes", str(dump)]) == 0
    data = json.loads(dump.read_text())
    assert data["lids"] == {"h1": 1, "h2": 2, "s1": 3, "s2": 4}
    assert data["routes"]["s1"] == {"1": 1, "2": 2, "4": 2}


def test_unknown_topology_is_one_clear_line(capsys):
    assert main(["route", "bogus:3"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("fabriclab-sm: error: unknown topology 'bogus:3'")
    assert "\n" not in err


def test_up_configures_running_switches(fake_fabric_switches, p4info_path, bmv2_json, tmp_path,
                                        capsys):
    s1, a1 = fake_fabric_switches("s1")
    s2, a2 = fake_fabric_switches("s2")
    book = tmp_path / "book.json"
    rc = main(["up", "line:2", "--switch", f"s1={a1}", "--switch", f"s2={a2}",
               "--p4info", str(p4info_path), "--bmv2-json", str(bmv2_json),
               "--guid2lid", str(tmp_path / "g2l.json"), "--address-book", str(book)])
    assert rc == 0, capsys.readouterr().err
    assert len(s1.entries) == len(s2.entries) == 3
    assert json.loads(book.read_text())["hosts"]["h2"]["lid"] == 2


# ---------------------------------------------------- topology, routes' tracing, bad input


def test_topology_json_has_switches_hosts_links_and_the_sms_lids(tmp_path, capsys):
    assert main(["topology", "line:2", "--json"]) == 0
    desc = json.loads(capsys.readouterr().out)
    assert [(s["name"], s["lid"], s["device_id"], s["ports"]) for s in desc["switches"]] == [
        ("s1", 3, 1, {"1": "h1:0", "2": "s2:2"}), ("s2", 4, 2, {"1": "h2:0", "2": "s1:2"})]
    assert [(h["name"], h["lid"], h["switch"], h["port"]) for h in desc["hosts"]] == [
        ("h1", 1, "s1", 1), ("h2", 2, "s2", 1)]
    assert {(lk["a"], lk["a_port"], lk["b"], lk["b_port"]) for lk in desc["links"]} == {
        ("s1", 1, "h1", 0), ("s2", 1, "h2", 0), ("s1", 2, "s2", 2)}
    dump = tmp_path / "routes.json"
    assert main(["route", "fattree:4", "--dump-routes", str(dump)]) == 0
    capsys.readouterr()
    assert main(["topology", "fattree:4", "--json"]) == 0
    desc = json.loads(capsys.readouterr().out)
    lids = {n["name"]: n["lid"] for n in desc["switches"] + desc["hosts"]}
    assert lids == json.loads(dump.read_text())["lids"]


def test_topology_text_and_netfile(tmp_path, capsys):
    from controller.opensm import write_netfile

    net = tmp_path / "fabric.net"
    net.write_text(write_netfile(build("leafspine:2,2,1")))
    assert main(["topology", f"netfile:{net}"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].endswith(": 4 switches, 2 hosts, 6 links")
    assert sum(line.startswith("link ") for line in out) == 6


def test_topology_reads_a_guid2lid_map_without_writing_it(tmp_path, capsys):
    g2l = tmp_path / "g2l.json"
    assert main(["topology", "line:2", "--guid2lid", str(g2l)]) == 0
    assert not g2l.exists()
    assert "switch s1 lid 3 " in capsys.readouterr().out


def _tables(fabric, engine_name="minhop"):
    from controller.routing import engine
    from controller.routing.backup import backup_routes

    lids = LidMap().assign(fabric)
    eng = engine(engine_name)
    routes = eng.route(fabric, lids)
    backups = backup_routes(fabric, lids, routes, eng)
    return lids, {s: {d: (p, backups.get(s, {}).get(d)) for d, p in t.items()}
                  for s, t in routes.items()}


def test_trace_delivers_from_every_switch_with_and_without_the_first_cable():
    fabric = build("fattree:4")
    lids, tables = _tables(fabric, "ftree")
    links = {(lk.a, lk.a_port): lk for lk in fabric.links} | \
        {(lk.b, lk.b_port): lk for lk in fabric.links}
    for host in ("h1", "h16"):
        for switch in (s.name for s in fabric.switches):
            hops, problem = trace(fabric, tables, lids[host], switch, host)
            assert problem is None and hops[-1] == host
            primary, backup = tables[switch][lids[host]]
            if backup is not None:
                hops, problem = trace(fabric, tables, lids[host], switch, host,
                                      failed=links[(switch, primary)])
                assert problem is None, (switch, hops)
                assert hops[0] == f"{switch}:{backup}"


def test_trace_names_loops_blackholes_and_wrong_hosts():
    fabric = build("line:2")  # h1 - s1:1, s1:2 - s2:2, s2:1 - h2
    assert trace(fabric, {"s1": {2: (2, None)}, "s2": {2: (2, None)}}, 2, "s1", "h2") == \
        (["s1:2", "s2:2", "s1"], "LOOP: back at s1")
    assert trace(fabric, {"s1": {2: (2, None)}, "s2": {}}, 2, "s1", "h2") == \
        (["s1:2", "s2"], "BLACKHOLE: s2 has no route to 2")
    assert trace(fabric, {"s1": {2: (7, None)}}, 2, "s1", "h2") == \
        (["s1:7"], "BLACKHOLE: no cable at s1:7")
    assert trace(fabric, {"s1": {2: (1, None)}}, 2, "s1", "h2") == \
        (["s1:1", "h1"], "WRONG HOST: delivered to h1")
    assert trace(fabric, {"s1": {4: (2, None)}}, 4, "s1", "s2") == (["s1:2", "s2"], None)
    assert trace(fabric, {"s1": {2: (2, None)}}, 2, "s1", "h2")[1] == "s2's table was not read"


def test_bad_input_is_one_line_and_exit_2(capsys):
    cases = [
        (["topology", "bogus:3"], "unknown topology 'bogus:3'"),
        (["topology", "netfile:/nonexistent.net"], "/nonexistent.net"),
        (["status", "bogus:3", "--switch", "s1=127.0.0.1:1"], "unknown topology"),
        (["status", "line:2", "--switch", "s9=127.0.0.1:1"], "line:2 has no switch 's9'"),
        (["status", "line:2", "--switch", "s1"], "expected NAME=HOST:PORT"),
        (["routes", "line:2", "h9", "--switch", "s1=127.0.0.1:1"], "DLID 'h9'"),
        (["routes", "line:2", "0x10000", "--switch", "s1=127.0.0.1:1"], "LIDs are 1..0xFFFF"),
    ]
    for argv, message in cases:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.startswith("fabriclab-sm: error: ") and message in err, (argv, err)
        assert err.count("\n") == 1 and "Traceback" not in err


def test_status_of_an_unreachable_switch_is_one_line(capsys):
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    argv = ["status", "line:2", "--switch", f"s1=127.0.0.1:{port}", "--timeout", "0.2"]
    assert main(argv) == 1
    captured = capsys.readouterr()
    assert captured.out == (f"s1 (127.0.0.1:{port}): UNREACHABLE: no P4Runtime server at "
                            f"127.0.0.1:{port} after 0.2s\n")
    assert captured.err == ""
    assert main([*argv, "--json"]) == 1
    (s1,) = json.loads(capsys.readouterr().out)["switches"]
    assert (s1["switch"], s1["reachable"]) == ("s1", False)
    assert main(["routes", "line:2", "h2", "--switch", f"s1=127.0.0.1:{port}",
                 "--timeout", "0.2"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "DLID 2 (h2)"
    assert out[1].startswith("s1: not read: no P4Runtime server at")
    assert out[2] == "s2: not read: no --switch address"



def test_up_refuses_a_flow_control_mode_it_does_not_know(fake_fabric_switches, p4info_path,
                                                         bmv2_json, tmp_path, capsys):
    _s1, a1 = fake_fabric_switches("s1")
    _s2, a2 = fake_fabric_switches("s2")
    assert main(["up", "line:2", "--switch", f"s1={a1}", "--switch", f"s2={a2}",
                 "--p4info", str(p4info_path), "--bmv2-json", str(bmv2_json),
                 "--guid2lid", str(tmp_path / "g2l.json"), "--fc", "xon"]) == 2
    assert "--fc 'xon': expected one of lossy, pfc, credit" in capsys.readouterr().err


def test_flow_control_is_set_on_every_switch_with_each_links_quantum_and_buffer(monkeypatch):
    from controller import bringup, program_constants
    from controller import flow_control as fc
    from traffic.flow_control import FlowControl, pause_quantum_ns

    written = {}
    monkeypatch.setattr(fc, "configure", lambda conn, params, quanta, limits, constants,
                        hold_loop=False, pace=None: written.setdefault(
                            conn, (params, quanta, limits, hold_loop, pace)))
    fabric = build("line:2")
    params = bringup.fc_params(FlowControl.CREDIT, xoff=24, xon=12, headroom=24,
                               credit_limit=32, credit_coalesce=4, hoq_lifetime_us=500,
                               watchdog_detect_us=0, watchdog_restore_us=0)
    bringup.configure_flow_control({"s1": "conn1", "s2": "conn2"}, fabric, params, 1074,
                                   program_constants.fabric_p4())
    assert set(written) == {"conn1", "conn2"}
    got, quanta, limits, hold_loop, pace = written["conn1"]
    assert hold_loop is False  # no hold loop unless the run wired one (bmv2)
    assert pace is None  # no link pacer unless the links are shaped after the pipeline
    assert got.mode is fc.Mode.CREDIT and got.hoq_lifetime_us == 500
    assert quanta == {1: round(pause_quantum_ns(2000, 1074)), 2: round(pause_quantum_ns(2000, 1074))}
    assert limits == {1: 64, 2: 64}
    pfc = bringup.fc_params(FlowControl.PFC, xoff=24, xon=12, headroom=24, credit_limit=32,
                            credit_coalesce=4, hoq_lifetime_us=500, watchdog_detect_us=0,
                            watchdog_restore_us=0)
    assert pfc.mode is fc.Mode.PFC and pfc.hoq_lifetime_us == 0, "HoQ lifetime is CREDIT's"


def test_pfc_paces_links_shaped_after_the_pipeline_within_a_quarter_of_the_headroom(monkeypatch):
    from controller import bringup, program_constants
    from controller import flow_control as fc
    from traffic.flow_control import FlowControl

    written = {}
    monkeypatch.setattr(fc, "configure", lambda conn, params, quanta, limits, constants,
                        hold_loop=False, pace=None: written.__setitem__(conn, pace))
    fabric = build("line:2")  # 2000 frames/s links
    for mode in (FlowControl.PFC, FlowControl.CREDIT, FlowControl.LOSSY):
        params = bringup.fc_params(mode, xoff=16, xon=8, headroom=32, credit_limit=16,
                                   credit_coalesce=4, hoq_lifetime_us=0,
                                   watchdog_detect_us=0, watchdog_restore_us=0)
        bringup.configure_flow_control({"s1": "conn1", "s2": "conn2"}, fabric, params, 1074,
                                       program_constants.fabric_p4(), hold_loops={"s1", "s2"},
                                       pace_links=True)
        if mode is FlowControl.PFC:
            assert written["conn1"] == {1: fc.LinkPace(500_000, 8 * 500_000),
                                        2: fc.LinkPace(500_000, 8 * 500_000)}
        else:
            assert written["conn1"] is None, mode  # credits bound the backlog already


def test_a_link_pacer_needs_a_positive_rate_and_bound():
    from controller import flow_control as fc

    assert fc.LinkPace.at(300, 4) == fc.LinkPace(3_333_333, 13_333_332)
    for rate, bound in ((0, 4), (300, 0)):
        with pytest.raises(ValueError, match="must both be positive"):
            fc.LinkPace.at(rate, bound)


def test_the_hold_loop_is_turned_on_only_on_the_switches_named_as_wired(monkeypatch):
    from controller import bringup, program_constants
    from controller import flow_control as fc
    from traffic.flow_control import FlowControl

    written = {}
    monkeypatch.setattr(fc, "configure", lambda conn, params, quanta, limits, constants,
                        hold_loop=False, pace=None: written.setdefault(conn, hold_loop))
    fabric = build("line:3")
    params = bringup.fc_params(FlowControl.PFC, xoff=24, xon=12, headroom=24,
                               credit_limit=32, credit_coalesce=4, hoq_lifetime_us=0,
                               watchdog_detect_us=0, watchdog_restore_us=0)
    conns = {"s1": "conn1", "s2": "conn2", "s3": "conn3"}
    bringup.configure_flow_control(conns, fabric, params, 1074,
                                   program_constants.fabric_p4(), frozenset({"s2"}))
    assert written == {"conn1": False, "conn2": True, "conn3": False}
    with pytest.raises(ValueError, match="hold loops for switches line:3 does not have: s9"):
        bringup.configure_flow_control(conns, fabric, params, 1074,
                                       program_constants.fabric_p4(), {"s2", "s9"})
