"""Which switches get a hold loop (topologies/hold_loop.py): one decision for every path
that starts switches (`for_fabric`), what fabriclab-sm finds wired for switches it did
not start (`find`), and what each says about where held frames wait."""

from __future__ import annotations

from pathlib import Path

import pytest

from topologies import hold_loop

SWITCHES = ["s1", "s2", "s3"]


def test_real_bmv2_on_this_machine_gives_every_switch_its_loop_named_with_the_run_prefix():
    hold = hold_loop.for_fabric(SWITCHES, "fk3-", bmv2=True, ports=(508, 509))
    assert hold.switches == frozenset(SWITCHES) and hold.without == {}
    # the switch's two ports and the relay's two ends, all named with the run's prefix
    assert hold.loops["s2"].interfaces == ["fk3-s2-eth508", "fk3-s2-eth509",
                                           "fk3-s2-hr508", "fk3-s2-hr509"]
    assert hold.loops["s2"].ports == {508: "fk3-s2-eth508", 509: "fk3-s2-eth509"}
    assert hold.held_frames()["s1"].startswith(
        "hold loop fk3-s1-eth508 -> relay -> fk3-s1-eth509 (ports 508 -> 509), in ticket order")
    assert hold.summary().startswith("hold loop on every switch (3): port 508 to port 509 "
                                     "through a relay that gives held frames back in ticket "
                                     "order at 500 frames/s")
    # the relay's command: its two ends, its pace, its counts file
    cmd = hold.loops["s2"].relay_command("/usr/bin/python3", Path("/tmp/s2.json"))
    assert cmd == ["/usr/bin/python3", "-m", "topologies.hold_relay", "--rx", "fk3-s2-hr508",
                   "--tx", "fk3-s2-hr509", "--pace", "500", "--stats", "/tmp/s2.json"]


@pytest.mark.parametrize("bmv2, ports, on_servers, why", [
    (False, (508, 509), False, hold_loop.WHY_EMBEDDED),
    (True, None, False, hold_loop.WHY_NO_PROGRAM_LOOP),
    (True, (508, 509), True, hold_loop.WHY_ON_SERVERS),
])
def test_no_loop_elsewhere_and_every_switch_says_it_recirculates_and_why(bmv2, ports,
                                                                         on_servers, why):
    hold = hold_loop.for_fabric(SWITCHES, "fk3-", bmv2=bmv2, ports=ports,
                                on_servers=on_servers)
    assert hold.loops == {} and hold.switches == frozenset()
    assert hold.held_frames() == {name: f"recirculation: {why}" for name in SWITCHES}
    assert hold.summary() == f"recirculation on every switch: {why}"


def test_a_switch_name_too_long_for_its_loop_is_refused_before_anything_is_made():
    with pytest.raises(hold_loop.HoldLoopError, match="15"):
        hold_loop.for_fabric(["s1", "switch1234"], "fk3-", bmv2=True, ports=(508, 509))


def test_the_program_s_ports_decide_the_loop_ports():
    class Constants:
        has_hold_loop, hold_out_port, hold_in_port = True, 508, 509

    class Without:
        has_hold_loop = False

    assert hold_loop.program_ports(Constants()) == (508, 509)
    assert hold_loop.program_ports(Without()) is None


def test_find_uses_no_loop_that_is_not_on_this_machine_and_says_which_name_is_missing():
    hold = hold_loop.find(["s1", "s2"], "fz9-", (508, 509))
    assert hold.loops == {}
    assert hold.without["s1"].startswith("no interface fz9-s1-eth508 on this machine")
    assert hold.summary().startswith("recirculation on every switch: no interface fz9-s")
    assert hold_loop.find(["s1"], "fz9-", None).without == {
        "s1": hold_loop.WHY_NO_PROGRAM_LOOP}
    assert "15" in hold_loop.find(["switch1234"], "fz9-", (508, 509)).without["switch1234"]


def test_a_mix_names_both_kinds_of_switch_in_its_summary(monkeypatch):
    monkeypatch.setattr(hold_loop, "wiring_problem",
                        lambda loop: None if loop.switch == "s1" else "not here")
    hold = hold_loop.find(["s1", "s2", "s3"], "fk3-", (508, 509))
    assert hold.switches == frozenset({"s1"})
    assert hold.summary() == "recirculation on s2, s3, hold loop on s1: not here"
    assert hold.held_frames()["s3"] == "recirculation: not here"
