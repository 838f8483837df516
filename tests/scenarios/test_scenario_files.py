"""Scenario files: every shipped one loads; bad ones get errors naming the problem."""

from __future__ import annotations

import pytest

from fabriclab import scenario as sc


@pytest.mark.parametrize("name", sc.available())
def test_shipped_scenarios_load(name):
    s = sc.load(name)
    assert s.name == name


def test_defaults_are_resolved_in_the_scenario_as_run():
    s = sc.parse({"name": "x"}, "x.toml")
    data = s.as_dict()
    assert data["flow_control"] == "lossy"
    assert data["link"]["rate_pps"] > 0 and data["traffic"]["frames"] > 0


@pytest.mark.parametrize("data, message", [
    ({}, "`name`"),
    ({"name": "x", "colour": "red"}, "unknown field\\(s\\) colour"),
    ({"name": "x", "flow_control": "xon"}, "'xon' is not one of lossy, pfc, credit"),
    ({"name": "x", "traffic": {"frames": "many"}}, r"\[traffic\].frames: expected int"),
    ({"name": "x", "traffic": {"frames": -1}}, "must not be negative"),
    ({"name": "x", "link": {"speed": 3}}, r"\[link\]: unknown field\(s\) speed"),
    ({"name": "x", "traffic": {"pattern": "zigzag"}}, "pattern 'zigzag'"),
    ({"name": "x", "traffic": {"src": "h1", "dst": "h1"}}, "same host"),
    ({"name": "x", "routing": "magic"}, "routing 'magic'"),
])
def test_bad_scenarios_are_explained(data, message):
    with pytest.raises(sc.ScenarioError, match=message):
        sc.parse(data, "x.toml")


def test_unknown_scenario_name_lists_the_known_ones():
    with pytest.raises(sc.ScenarioError, match="unknown scenario 'nope': known are .*stream"):
        sc.load("nope")


def test_invalid_toml_is_reported_with_the_file(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("name = \n")
    with pytest.raises(sc.ScenarioError, match="bad.toml: not valid TOML"):
        sc.load(str(bad))


def test_a_sweep_expands_into_one_valid_scenario_per_value():
    data = {"name": "w", "flow_control": "pfc", "pfc": {"xon": 4},
            "sweep": {"parameter": "pfc.xoff", "values": [8, 16, 32]}}
    points = sc.sweep_points(data, "w.toml")
    assert [label for label, _ in points] == ["pfc.xoff=8", "pfc.xoff=16", "pfc.xoff=32"]
    assert [p.pfc.xoff for _, p in points] == [8, 16, 32]
    assert all(p.pfc.xon == 4 for _, p in points), "other fields of the section are kept"


def test_a_sweep_over_the_topology_changes_the_fabric_size():
    data = {"name": "s", "sweep": {"parameter": "topology", "values": ["line:2", "line:4"]}}
    assert [p.topology for _, p in sc.sweep_points(data, "s.toml")] == ["line:2", "line:4"]


@pytest.mark.parametrize("data, message", [
    ({"name": "x", "sweep": {"parameter": "pfc.xoff"}}, "has no values"),
    ({"name": "x", "sweep": {"parameter": "pfc.xoff", "values": [1]}, "pfc": {"xon": 4}},
     r"pfc.xoff=1\): \[pfc\] xon \(4\) must not exceed xoff \(1\)"),
    ({"name": "x", "sweep": {"parameter": "pfc.colour", "values": [1]}},
     r"\[pfc\]: unknown field\(s\) colour"),
    ({"name": "x", "faults": [{"at_s": 1, "kind": "meteor", "target": "s1"}]},
     r"\[\[faults\]\] #1: kind 'meteor'"),
    ({"name": "x", "faults": [{"at_s": 1, "kind": "link_down"}]}, "`target` is required"),
    ({"name": "x", "faults": {"at_s": 1}}, "array of tables"),
])
def test_bad_sweeps_and_faults_are_explained(data, message):
    with pytest.raises(sc.ScenarioError, match=message):
        sc.parse(data, "x.toml")


def test_faults_and_host_lists_are_read():
    s = sc.parse({"name": "f", "traffic": {"pattern": "allreduce-ring",
                                           "hosts": ["h1", "h2", "h3"]},
                  "faults": [{"at_s": 0.5, "kind": "link_down", "target": "s1-s2"},
                             {"at_s": 1.5, "kind": "link_up", "target": "s1-s2"}]}, "f.toml")
    assert s.traffic.hosts == ("h1", "h2", "h3")
    assert [(f.at_s, f.kind) for f in s.faults] == [(0.5, "link_down"), (1.5, "link_up")]
    assert s.as_dict()["faults"][0]["target"] == "s1-s2"


@pytest.mark.parametrize("name", sc.available())
def test_the_scenario_as_run_parses_back_to_the_same_scenario(name):
    s = sc.load(name)
    assert sc.parse(s.as_dict(), "as run") == s


def test_the_rc_window_control_reaches_the_nics_and_a_bad_one_is_explained():
    from fabriclab.traffic_run import nic_settings

    data = sc.load("link-failure-allreduce").as_dict()
    options = nic_settings(sc.parse(data, "t")).rc_options
    assert options[options.index("--rc-window-control") + 1] == "fixed"  # the default
    data["traffic"] = {**data["traffic"], "rc_window_control": "delay"}
    options = nic_settings(sc.parse(data, "t")).rc_options
    assert options[options.index("--rc-window-control") + 1] == "delay"
    data["traffic"]["rc_window_control"] = "huge"
    with pytest.raises(sc.ScenarioError, match="rc_window_control 'huge' is not one of delay"):
        sc.parse(data, "t")


def test_the_rc_window_reaches_the_nics_and_one_below_the_ack_interval_is_explained():
    from fabriclab.traffic_run import nic_settings

    data = sc.load("link-failure-allreduce").as_dict()
    options = nic_settings(sc.parse(data, "t")).rc_options
    assert options[options.index("--rc-window") + 1] == "128"  # the default
    data["traffic"] = {**data["traffic"], "rc_window": 32}
    options = nic_settings(sc.parse(data, "t")).rc_options
    assert options[options.index("--rc-window") + 1] == "32"
    data["traffic"]["rc_window"] = 8
    with pytest.raises(sc.ScenarioError, match=r"rc_window 8 is not between 16 \(the NIC's ACK"):
        sc.parse(data, "t")
