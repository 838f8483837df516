"""`fabriclab-sm route TOPO --engine E --check --json`: the routing comparison in one line."""

from __future__ import annotations

import json

import pytest

from controller.cli import main
from controller.opensm import write_netfile
from topologies.generators import build

CHECK_KEYS = {"hosts", "switches", "engine", "seconds", "peak_memory_mb", "deadlock_free",
              "vls_used", "max_link_load", "mean_link_load", "unreachable_pairs",
              "path_length_histogram", "backup_loop_free"}


def _route(capsys, *args: str) -> tuple[int, dict]:
    rc = main(["route", *args, "--json"])
    return rc, json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("name", ["minhop", "updn", "ftree"])
def test_check_reports_every_figure_for_every_engine_on_a_fat_tree(capsys, name):
    rc, out = _route(capsys, "fattree:4", "--engine", name, "--check")
    assert rc == 0 and CHECK_KEYS <= set(out)
    assert (out["hosts"], out["switches"], out["engine"]) == (16, 20, name)
    assert out["deadlock_free"] and out["vls_used"] == 1 and out["backup_loop_free"]
    assert out["unreachable_pairs"] == 0
    assert out["path_length_histogram"] == {"1": 16, "3": 32, "5": 192}
    assert out["max_link_load"] >= out["mean_link_load"] == 13.0


def test_min_hop_on_a_ring_needs_two_vls_and_says_so(capsys):
    rc, out = _route(capsys, "ring:6", "--engine", "minhop", "--check")
    assert rc == 0
    assert out["deadlock_free_on_one_vl"] is False
    assert (out["deadlock_free"], out["vls_used"]) == (True, 2)


def test_without_check_the_check_figures_are_null(capsys):
    rc, out = _route(capsys, "ring:4", "--engine", "updn")
    assert rc == 0 and out["deadlock_free"] is None and out["vls_used"] is None


def test_a_net_file_is_routed_like_the_generated_fabric(capsys, tmp_path):
    path = tmp_path / "fattree4.net"
    path.write_text(write_netfile(build("fattree:4")))
    rc, out = _route(capsys, f"netfile:{path}", "--engine", "ftree", "--check")
    assert rc == 0 and (out["hosts"], out["switches"]) == (16, 20)
    assert out["path_length_histogram"] == {"1": 16, "3": 32, "5": 192}


@pytest.mark.parametrize(("args", "message"), [
    (["route", "bogus:3"], "unknown topology 'bogus:3'"),
    (["route", "fattree:3"], "k must be an even number"),
    (["route", "fattree:4", "--engine", "lash"], "unknown routing engine 'lash'"),
    (["route", "ring:5", "--engine", "ftree"], "not a fat tree"),
    (["route", "netfile:/nonexistent/fabric.net"], "no such file"),
])
def test_bad_input_is_one_line_and_exit_status_2(capsys, args, message):
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and err.startswith("fabriclab-sm: error:")


def test_a_malformed_net_file_names_file_and_line(capsys, tmp_path):
    bad = tmp_path / "bad.net"
    bad.write_text('Switch 2 "a"\n[1] "b"\n')
    assert main(["route", f"netfile:{bad}"]) == 2
    err = capsys.readouterr().err
    assert f"{bad}:2:" in err and err.count("\n") == 1


def test_past_the_unicast_lid_space_extended_lids_are_offered(capsys, monkeypatch):
    import controller.lids as lids

    monkeypatch.setattr(lids, "LID_MAX", 30)
    assert main(["route", "fattree:4"]) == 2
    assert "--extended-lids" in capsys.readouterr().err
    rc, out = _route(capsys, "fattree:4", "--extended-lids", "--engine", "ftree")
    assert rc == 0 and out["hosts"] == 16
