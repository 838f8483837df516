"""Partitions and QoS in a run's plan and in the NICs' flow files (no emulation)."""

import json

import pytest

from fabriclab import scenario as sc
from fabriclab.plan import plan
from fabriclab.qos_traffic import BACKGROUND_FLOW_BASE, apply_qos
from traffic.collectives import CollectiveSpec, address_book, write_flow_files


def test_checkpoint_scenario_plans_classes_background_and_the_storage_host():
    data = sc.load("checkpoint-vs-allreduce").as_dict()  # one compared run: its policy
    data["qos"] = {**data["qos"], "compare": [], "policy": "qos/gradient-favoured.conf"}
    p = plan(sc.parse(data, "one setting"))
    assert p.ranks == ("h1", "h2", "h3") and p.nic_hosts == ("h1", "h2", "h3", "h4")
    assert p.qos.traffic_sl == 0 and p.qos.background[0].sl == 1
    assert p.qos.background[0].src == p.ranks and p.qos.class_queues


def _with(tmp_path, **qos) -> dict:
    data = sc.load("checkpoint-vs-allreduce").as_dict()
    data["qos"] = {**data["qos"], **qos}
    return data


def test_a_bad_policy_file_is_refused_before_anything_starts_with_its_line(tmp_path):
    bad = tmp_path / "bad.conf"
    bad.write_text("qos_max_vls 2\nqos_vlarb_low 0:224,1:999\n")
    s = sc.parse(_with(tmp_path, compare=[str(bad)]), "t")
    with pytest.raises(sc.ScenarioError, match=r"bad.conf:2: weight 999 is not 0-255"):
        plan(s)


def test_a_bad_partitions_file_and_an_unknown_class_are_refused(tmp_path):
    bad = tmp_path / "partitions.conf"
    bad.write_text("jobA=0x0001 : h1, h7 ;\n")
    with pytest.raises(sc.ScenarioError, match=r"partitions.conf:1: 'h7' is not a host"):
        plan(sc.parse(_with(tmp_path, partitions=str(bad)), "t"))
    with pytest.raises(sc.ScenarioError, match="traffic class 'storage' is not in the QoS"):
        plan(sc.parse(_with(tmp_path, policy="qos/equal-weights.conf",
                            traffic_class="storage"), "t"))


def test_flow_files_get_class_sl_pkey_arbitration_and_background(tmp_path):
    s = sc.load("partition-isolation")
    data = s.as_dict()
    data["qos"] = {**data["qos"], "policy": "qos/gradient-favoured.conf"}
    data["background"] = [{**b, "traffic_class": "checkpoint"} for b in data["background"]]
    p = plan(sc.parse(data, "t"))
    book = {f"h{i}": {"lid": i, "mac": f"02:00:00:00:00:0{i}", "sl": 0} for i in range(1, 5)}
    spec = CollectiveSpec("ring_allreduce", 2, 8192, payload=1024)
    files = write_flow_files(spec, address_book({h: (book[h]["lid"], book[h]["mac"])
                                                 for h in p.ranks}), tmp_path)
    classes = apply_qos(p.qos, files, book, 1024, tmp_path)
    h3 = json.loads(files["h3"].read_text())
    assert {f["pkey"] for f in h3["flows"]} == {0x8002}  # job B, full members
    assert h3["vl_arbitration"]["low"] == [[0, 224], [1, 32]] and h3["vls"] == [0, 1]
    h1 = json.loads(files["h1"].read_text())  # job A's host runs a NIC for its intrusion
    assert {f["pkey"] for f in h1["flows"]} == {0x8001}  # its own partition's key
    assert {f["flow"] for f in h1["flows"]} == {BACKGROUND_FLOW_BASE, BACKGROUND_FLOW_BASE + 1,
                                                BACKGROUND_FLOW_BASE + 1000,
                                                BACKGROUND_FLOW_BASE + 1001}
    assert not [r for r in h3["recvs"] if r["coll_id"] >= 60000]  # never expected: dropped
    assert {f["sl"] for f in h1["flows"]} == {1}  # the checkpoint class's SL
    assert classes[str(BACKGROUND_FLOW_BASE)] == {"class": "checkpoint", "src": "h1",
                                                  "dst": "h3"}


def test_a_background_sender_paired_with_itself_is_refused():
    data = {"name": "b", "topology": "line:2", "traffic": {"pattern": "allreduce-ring"},
            "background": [{"dst": ["h1"]}]}  # senders: the ranks h1, h2
    with pytest.raises(sc.ScenarioError, match=r"\[\[background\]\] #1: h1 would send to "
                                               "itself"):
        plan(sc.parse(data, "b"))
    data["background"] = [{"dst": ["h2", "h1"]}]  # h1 -> h2, h2 -> h1
    assert plan(sc.parse(data, "b")).qos.background[0].dst == ("h2", "h1")


def test_a_background_of_no_frames_is_refused():
    data = {"name": "b", "topology": "line:3", "background": [{"dst": ["h3"], "frames": 0}]}
    with pytest.raises(sc.ScenarioError, match=r"#1.frames must be at least 1, got 0"):
        sc.parse(data, "b")


def test_a_scenario_outside_scenarios_finds_its_own_qos_files_beside_it(tmp_path):
    shipped = sc.SCENARIO_DIR / "qos" / "gradient-favoured.conf"
    (tmp_path / "mine.conf").write_text(shipped.read_text())
    (tmp_path / "job.toml").write_text(
        'name = "job"\ntopology = "leafspine:2,1,2"\n'
        '[traffic]\npattern = "allreduce-ring"\nhosts = ["h1", "h2", "h3"]\n'
        '[qos]\npolicy = "mine.conf"\ncompare = ["mine.conf", "qos/equal-weights.conf"]\n'
        '[[background]]\ndst = ["h4"]\n')
    s = sc.load(str(tmp_path / "job.toml"))
    assert s.qos.policy == str(tmp_path / "mine.conf")  # was scenarios/mine.conf: no such file
    assert s.qos.compare == (str(tmp_path / "mine.conf"), "qos/equal-weights.conf")
    assert plan(s).qos.policy is not None
    assert [p for _, p in sc.load_points(str(tmp_path / "job.toml"))] == [s]
    assert sc.load("checkpoint-vs-allreduce").qos.compare[0] == "qos/equal-weights.conf"


def test_a_scenario_outside_scenarios_finds_its_netfile_beside_it(tmp_path, monkeypatch):
    from tests.topologies.test_generators import NETFILE

    (tmp_path / "lab.net").write_text(NETFILE)
    (tmp_path / "lab.toml").write_text('name = "lab"\ntopology = "netfile:lab.net"\n')
    monkeypatch.chdir("/")  # not the scenario's folder
    s = sc.load(str(tmp_path / "lab.toml"))
    assert s.topology == f"netfile:{tmp_path / 'lab.net'}"
    assert plan(s).fabric.host_switch("h1") == ("s1", 1)


def test_swept_files_are_found_beside_a_scenario_outside_scenarios(tmp_path, monkeypatch):
    from tests.topologies.test_generators import NETFILE

    shipped = sc.SCENARIO_DIR / "qos" / "gradient-favoured.conf"
    (tmp_path / "mine.conf").write_text(shipped.read_text())
    (tmp_path / "lab.net").write_text(NETFILE)
    (tmp_path / "job.toml").write_text(
        'name = "job"\ntopology = "leafspine:2,1,2"\n'
        '[traffic]\npattern = "allreduce-ring"\nhosts = ["h1", "h2", "h3"]\n'
        '[[background]]\ndst = ["h4"]\n'
        '[sweep]\nparameter = "qos.policy"\nvalues = ["mine.conf", "qos/equal-weights.conf"]\n')
    (tmp_path / "nets.toml").write_text(
        'name = "nets"\n[sweep]\nparameter = "topology"\nvalues = ["netfile:lab.net", "line:2"]\n')
    monkeypatch.chdir("/")  # not the scenarios' folder
    points = sc.load_points(str(tmp_path / "job.toml"))
    assert [label for label, _ in points] == ["qos.policy=mine.conf",
                                              "qos.policy=qos/equal-weights.conf"]
    # was "mine.conf", looked for in scenarios/ only; a shipped file stays as named
    assert [p.qos.policy for _, p in points] == [str(tmp_path / "mine.conf"),
                                                 "qos/equal-weights.conf"]
    assert all(plan(p).qos.policy is not None for _, p in points)
    nets = [p.topology for _, p in sc.load_points(str(tmp_path / "nets.toml"))]
    assert nets == [f"netfile:{tmp_path / 'lab.net'}", "line:2"]
