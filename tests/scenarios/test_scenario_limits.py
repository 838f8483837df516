"""Scenario values the types allow but a run cannot use are refused when the file is read,
with one line naming the field, not by a NIC or a traceback after the fabric is up."""

from __future__ import annotations

import pytest

from fabriclab import scenario as sc
from fabriclab.traffic_run import nic_settings
from traffic.nic_config import NicConfig


@pytest.mark.parametrize("data, message", [
    ({"traffic": {"pattern": "alltoall", "hosts": [1, 2]}},
     r"\[traffic\].hosts: expected an array of strings, got \[1, 2\]"),
    ({"traffic": {"hosts": "h1,h2"}}, r"\[traffic\].hosts: expected an array, got 'h1,h2'"),
    ({"background": [{"dst": [3]}]}, r"\[\[background\]\] #1.dst: expected an array of str"),
    ({"qos": {"compare": [1]}}, r"\[qos\].compare: expected an array of strings"),
    ({"duration_s": float("nan")}, "duration_s: expected a finite number, got nan"),
    ({"traffic": {"rc_timeout_ms": float("inf")}},
     r"\[traffic\].rc_timeout_ms: expected a finite number, got inf"),
    ({"seed": True}, "seed: expected a non-negative number"),
    # TOML's true is no number (a bool is a Python int: rate_pps = true ran at 1 pps)
    ({"traffic": {"rate_pps": True}}, r"\[traffic\].rate_pps: expected int, got true"),
    ({"pfc": {"xoff": False}}, r"\[pfc\].xoff: expected int, got false"),
    ({"training": {"compute_ms": True}}, r"\[training\].compute_ms: expected float, got true"),
])
def test_wrong_types_inside_arrays_and_non_finite_numbers_are_explained(data, message):
    with pytest.raises(sc.ScenarioError, match=message):
        sc.parse({"name": "x", **data}, "x.toml")


@pytest.mark.parametrize("sweep, message", [
    ({"parameter": "seed", "values": 3}, r"\[sweep\].values: expected an array, got 3"),
    ({"parameter": 5, "values": [1]}, r"\[sweep\].parameter: expected str, got 5"),
    ({"parameter": "seed", "values": []}, "parameter 'seed' has no values"),
    ({"values": [1, 2]}, r"\[sweep\] has values but no `parameter`"),
])
def test_a_malformed_sweep_table_is_explained(sweep, message):
    with pytest.raises(sc.ScenarioError, match=message):
        sc.sweep_points({"name": "x", "sweep": sweep}, "x.toml")


def test_a_sweep_with_a_comparison_is_refused_rather_than_dropping_the_comparison():
    data = {"name": "x", "sweep": {"parameter": "link.rate_pps", "values": [1000, 2000]},
            "compare": [{"name": "a"}]}
    with pytest.raises(sc.ScenarioError, match=r"\[sweep\] and \[\[compare\]\] cannot"):
        sc.sweep_points(data, "x.toml")


def test_a_scenario_path_that_is_no_file_is_one_error(tmp_path):
    folder = tmp_path / "odd.toml"
    folder.mkdir()
    with pytest.raises(sc.ScenarioError, match="odd.toml: cannot be read"):
        sc.load_points(str(folder))


@pytest.mark.parametrize("data, message", [
    ({"traffic": {"rate_pps": 0}}, r"\[traffic\].rate_pps must be at least 1, got 0"),
    ({"link": {"rate_pps": 0}}, r"\[link\].rate_pps must be at least 1"),
    ({"link": {"buffer_pkts": 0}}, r"\[link\].buffer_pkts must be at least 1"),
    ({"flow_control": "credit", "credit": {"buffer_pkts": 0}},
     r"\[credit\].buffer_pkts must be at least 1"),
    ({"credit": {"coalesce": 0}}, r"\[credit\].coalesce must be at least 1"),
    ({"credit": {"buffer_pkts": 4096}}, "exceeds InfiniBand's credit window, 2048"),
    ({"traffic": {"frames": 0}}, r"\[traffic\].frames must be at least 1"),
    ({"traffic": {"pattern": "alltoall", "message_bytes": 0}},
     r"\[traffic\].message_bytes must be at least 1"),
    ({"traffic": {"pattern": "alltoall", "payload_bytes": 0}},
     r"\[traffic\].payload_bytes must be at least 1"),
    ({"traffic": {"pattern": "allreduce-ring", "repetitions": 0}},
     r"\[traffic\].repetitions must be at least 1"),
    ({"traffic": {"rc_retry_limit": 0}}, r"\[traffic\].rc_retry_limit must be at least 1"),
    ({"traffic": {"rc_rto_min_ms": 0}}, r"\[traffic\].rc_rto_min_ms must be greater than 0"),
    ({"traffic": {"rc_rto_min_ms": 900}}, "exceeds the NIC's adaptive timeout ceiling"),
    ({"duration_s": 0}, "duration_s must be greater than 0"),
    ({"stall_timeout_s": 0.5, "traffic": {"rate_pps": 2}},
     r"stall_timeout_s 0.5 s is not longer than one frame time at 2 frames/s"),
    ({"traffic": {"payload_bytes": 1463}},
     r"payload_bytes 1463 does not fit a frame: at most 1462 bytes"),
    ({"background": [{"dst": ["h2"], "payload_bytes": 9000}]},
     r"\[\[background\]\] #1.payload_bytes 9000 does not fit"),
    ({"flow_control": "pfc", "pfc": {"xoff": 12, "xon": 12}},
     "PFC needs \\[pfc\\] xon < xoff <= \\[link\\] buffer_pkts"),
    ({"flow_control": "pfc", "link": {"buffer_pkts": 16}}, r"xoff=24 buffer_pkts=16"),
    ({"compare": [{"name": "roce", "flow_control": "pfc"}], "link": {"buffer_pkts": 16}},
     r"xoff=24 buffer_pkts=16"),
])
def test_numbers_a_run_cannot_use_are_refused_naming_the_field(data, message):
    with pytest.raises(sc.ScenarioError, match=message):
        sc.parse({"name": "x", **data}, "x.toml")


@pytest.mark.parametrize("data", [
    {"traffic": {"payload_bytes": 1462}},  # a full 1514-byte frame
    {"traffic": {"payload_bytes": 0}},  # a stream of bare headers
    {"stall_timeout_s": 0},  # no stall detection
    {"link": {"buffer_pkts": 16}},  # PFC watermarks only matter in PFC
    {"flow_control": "pfc", "pfc": {"xoff": 64, "xon": 63}},
])
def test_edge_values_that_work_are_accepted_and_the_nic_takes_them(data):
    s = sc.parse({"name": "x", **data}, "x.toml")
    n = nic_settings(s)
    NicConfig(iface="x", mode=n.mode, rate_pps=n.rate_pps, mac="02:00:00:00:00:01",
              buffer=n.buffer, xoff=n.xoff, xon=n.xon, credit_coalesce=n.credit_coalesce,
              frame_bytes=n.frame_bytes)  # raises NicConfigError if the NIC would refuse


@pytest.mark.parametrize("name", sc.available())
def test_every_shipped_scenario_and_sweep_point_is_within_the_limits(name):
    assert sc.load_points(name)


@pytest.mark.parametrize("name", ["a/b", "..", "../escape"])
def test_a_name_that_cannot_name_a_result_directory_is_refused(name):
    with pytest.raises(sc.ScenarioError, match="names the result directory"):
        sc.parse({"name": name}, "x.toml")  # was a FileNotFoundError making the directory
    with pytest.raises(sc.ScenarioError, match=r"\[\[compare\]\] #1: `name` .* names the"):
        sc.parse({"name": "x", "compare": [{"name": name}]}, "x.toml")


def test_a_name_with_spaces_is_a_result_directory(tmp_path):
    from fabriclab.results import new_run_dir

    s = sc.parse({"name": "my incast run"}, "x.toml")
    assert new_run_dir(tmp_path, s.name).name.endswith("-my incast run")


def test_a_flow_control_override_is_checked_like_the_file():
    s = sc.parse({"name": "small", "link": {"buffer_pkts": 16}}, "x.toml")  # lossy: fine
    with pytest.raises(sc.ScenarioError, match=r"small with --fc pfc: PFC needs .* xoff=24 "
                                               "buffer_pkts=16"):
        s.with_overrides(flow_control="pfc")
    assert s.with_overrides(flow_control="credit").flow_control.value == "credit"


def test_a_missing_scenario_file_is_named_as_a_file(tmp_path):
    with pytest.raises(sc.ScenarioError, match=r"nope.toml: no such scenario file$"):
        sc.load_points(str(tmp_path / "nope.toml"))  # was "unknown scenario ...: known are"
    with pytest.raises(sc.ScenarioError, match="unknown scenario 'nope': known are"):
        sc.load_points("nope")


def test_a_training_compute_longer_than_the_stall_timeout_is_refused():
    data = {"name": "t", "stall_timeout_s": 1.0,
            "traffic": {"pattern": "allreduce-ring", "transport": "rc"},
            "training": {"iterations": 3, "compute_ms": 1500.0}}
    with pytest.raises(sc.ScenarioError, match="compute_ms 1500 is not shorter than "
                                               "stall_timeout_s 1 s"):
        sc.parse(data, "t")  # the run stopped the job as stalled after 1 s of compute
    assert sc.parse({**data, "stall_timeout_s": 0}, "t").training.compute_ms == 1500.0
    assert sc.parse({**data, "stall_timeout_s": 3.0}, "t")
