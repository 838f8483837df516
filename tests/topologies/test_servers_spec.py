"""`--servers` and the scenario's [cluster] section: checked before anything starts."""

from __future__ import annotations

import pytest

from fabriclab import scenario as sc
from topologies import capacity
from topologies.distributed import plan_placement, server_names
from topologies.generators import build
from topologies.servers import parse_servers, supervised


def test_servers_spellings():
    assert parse_servers("ns:3") == ("namespaces", 3)
    assert parse_servers("a.lab, b.lab") == ("ssh", ["a.lab", "b.lab"])
    assert server_names("ns:2") == ["srv1", "srv2"]
    for bad in ("ns:0", "ns:x", " , ", "ssh:ns:0"):
        with pytest.raises(ValueError, match="--servers"):
            parse_servers(bad)


def test_which_servers_go_through_a_supervisor():
    assert parse_servers("ssh:ns:3") == ("namespaces", 3)
    assert server_names("ssh:ns:2") == ["srv1", "srv2"]
    assert supervised("ssh:ns:3") and supervised("a.lab,b.lab")
    assert not supervised("ns:3")


def test_a_cluster_section_names_an_ssh_config():
    data = sc.load("incast").as_dict()
    data["cluster"] = {"servers": "ssh:ns:3", "ssh_config": "~/lab/ssh_config"}
    s = sc.parse(data, "x.toml")
    assert (s.cluster.servers, s.cluster.ssh_config) == ("ssh:ns:3", "~/lab/ssh_config")


def test_a_cluster_section_is_read_and_checked():
    data = sc.load("incast").as_dict()
    data["cluster"] = {"servers": "ns:3", "placement": "block"}
    s = sc.parse(data, "x.toml")
    assert (s.cluster.servers, s.cluster.placement) == ("ns:3", "block")
    data["cluster"] = {"servers": "ns:3", "placement": "spread"}
    with pytest.raises(sc.ScenarioError, match=r"\[cluster\]: placement 'spread'"):
        sc.parse(data, "x.toml")
    data["cluster"] = {"servers": "ns:none"}
    with pytest.raises(sc.ScenarioError, match=r"x.toml: \[cluster\]: --servers 'ns:none'"):
        sc.parse(data, "x.toml")


def test_the_command_line_overrides_the_cluster_section():
    s = sc.load("incast").with_overrides(servers="ns:2", placement="random")
    assert (s.cluster.servers, s.cluster.placement) == ("ns:2", "random")
    with pytest.raises(sc.ScenarioError, match="command line: placement 'x'"):
        sc.load("incast").with_overrides(servers="ns:2", placement="x")


def test_per_server_capacity_counts_what_each_server_forwards():
    fabric = build("fattree:4")
    cluster = sc.ClusterSpec(servers="ns:3", placement="group")
    per = capacity.per_server(fabric, plan_placement(fabric, cluster, seed=1))
    assert sum(s["switches"] for s in per.values()) == 20
    assert sum(s["hosts"] for s in per.values()) == 16
    # every switch port at full rate: 20 switches x 4 ports x 2000 pps
    assert sum(s["worst_case_pps"] for s in per.values()) == 20 * 4 * 2000
    assert sum(s["tunnels"] for s in per.values()) == 2 * 12  # both ends of 12 tunnels
    assert capacity.servers_needed(fabric, 16, bench={"switch_pps": 8000}) == 2
