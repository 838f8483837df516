"""`fabriclab-sm route` offline, and `up` against in-memory switches."""

from __future__ import annotations

import json

from controller.cli import main


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
