"""Where held frames wait when `fabriclab-sm up --fc` configures switches it did not
start (controller/held_frames.py): the hold loop only where it is wired on this machine,
recirculation elsewhere, said on stdout, stderr and in --metadata, and read back by
`status`. Against embedded switch processes on loopback (fixtures in conftest.py); the
same on real bmv2 with real loops: tests/scenarios/test_sm_hold_loop_bmv2.py."""

from __future__ import annotations

import json

from p4.v1 import p4runtime_pb2

from controller import held_frames
from controller.cli import main
from controller.p4runtime_client import SwitchConnection
from topologies import hold_loop


def _switch_args(switches) -> list[str]:
    return [a for name, (addr, _dev) in sorted(switches.items())
            for a in ("--switch", f"{name}={addr}")]


def _up(switches, compiled, tmp_path, *extra: str) -> int:
    p4info, bmv2_json = compiled
    return main(["up", "line:2", *_switch_args(switches), "--p4info", str(p4info), "--bmv2-json", str(bmv2_json),
                 "--guid2lid", str(tmp_path / "g2l.json"), *extra])


def _read_back(switches, name: str) -> tuple[str, list[int] | None]:
    """(held_frames.read, the ports of clone session 99 or None) of one switch."""
    address, device_id = switches[name]
    with SwitchConnection(name, address, device_id, observe_only=True) as obs:
        obs.fetch_pipeline()
        query = p4runtime_pb2.Entity()  # every session: a missing one is NOT_FOUND if named
        query.packet_replication_engine_entry.clone_session_entry.SetInParent()
        sessions = [e.packet_replication_engine_entry.clone_session_entry
                    for e in obs.read([query])]
        ports = next(([r.egress_port for r in s.replicas] for s in sessions
                      if s.session_id == 99), None)
        return held_frames.read(obs), ports


def test_without_hold_loops_every_switch_says_its_held_frames_recirculate(
        switch_processes, compiled_fabric, tmp_path, capsys):
    switches = switch_processes({"s1": 1, "s2": 2})
    assert _up(switches, compiled_fabric, tmp_path, "--fc", "credit") == 0
    captured = capsys.readouterr()
    for name in ("s1", "s2"):
        assert f"{name}: held frames: recirculation: {held_frames.WHY_NOT_ASKED}" \
            in captured.out.splitlines()
        assert _read_back(switches, name) == ("recirculation", None)
    assert captured.err == ""  # nothing was asked for that is missing


def test_a_loop_asked_for_and_not_wired_here_is_not_used_and_the_run_says_so(
        switch_processes, compiled_fabric, tmp_path, capsys):
    switches = switch_processes({"s1": 1, "s2": 2})
    metadata = tmp_path / "metadata.json"
    assert _up(switches, compiled_fabric, tmp_path, "--fc", "credit", "--hold-loops", "fz9-",
               "--metadata", str(metadata)) == 0
    captured = capsys.readouterr()
    assert "s1: held frames: recirculation: no interface fz9-s1-eth508 on this machine" \
        in captured.out
    assert "fabriclab-sm: warning: s2 has no hold loop (no interface fz9-s2-eth508" \
        in captured.err
    record = json.loads(metadata.read_text())
    assert record["flow_control"] == "credit"
    assert record["held_frames"].startswith("recirculation on every switch: no interface")
    assert set(record["held_frames_by_switch"]) == {"s1", "s2"}
    # never turned on without its veth pair: a held frame sent to port 508 would be lost
    assert _read_back(switches, "s1") == ("recirculation", None)


def test_the_sm_turns_the_loop_on_exactly_where_it_is_wired(
        switch_processes, compiled_fabric, tmp_path, capsys, monkeypatch):
    switches = switch_processes({"s1": 1, "s2": 2})
    # s1's pair is "wired" (the check of /sys/class/net and tc stood in for); s2's is not
    monkeypatch.setattr(hold_loop, "wiring_problem",
                        lambda loop: None if loop.switch == "s1" else "no pair here")
    metadata = tmp_path / "metadata.json"
    assert _up(switches, compiled_fabric, tmp_path, "--fc", "pfc", "--hold-loops", "fz9-",
               "--metadata", str(metadata)) == 0
    captured = capsys.readouterr()
    assert "s1: held frames: hold loop fz9-s1-eth508 -> fz9-s1-eth509 (ports 508 -> 509)" \
        in captured.out
    assert "s2: held frames: recirculation: no pair here" in captured.out
    assert "warning: s2 has no hold loop" in captured.err and "s1 has" not in captured.err
    assert _read_back(switches, "s1") == ("hold loop", [508])
    assert _read_back(switches, "s2") == ("recirculation", None)
    assert json.loads(metadata.read_text())["held_frames"] == \
        "recirculation on s2, hold loop on s1: no pair here"
    args = _switch_args(switches)
    assert main(["status", "line:2", *args, "--json"]) == 0
    report = {s["switch"]: s for s in json.loads(capsys.readouterr().out)["switches"]}
    assert (report["s1"]["held_frames"], report["s2"]["held_frames"]) == \
        ("hold loop", "recirculation")
    assert main(["status", "line:2", *args]) == 0
    assert "held frames: hold loop" in capsys.readouterr().out.splitlines()[0]


def test_hold_loops_or_metadata_without_flow_control_is_refused(capsys):
    for extra in (["--hold-loops"], ["--metadata", "m.json"]):
        assert main(["up", "line:2", "--switch", "s1=127.0.0.1:1", "--p4info", "p",
                     "--bmv2-json", "j", *extra]) == 2
        assert "--hold-loops and --metadata go with --fc" in capsys.readouterr().err
