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
