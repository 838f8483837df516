"""The training-job scenario's sections: [training], [flaps], [[compare]] (no emulation)."""

from __future__ import annotations

import pytest

from fabriclab import scenario as sc
from fabriclab.compare import combine
from fabriclab.plan import plan
from fabriclab.training_job import job_model
from traffic.flow_control import FlowControl
from traffic.metrics import RunMetrics, TrainingMetrics

BASE = {"name": "t", "topology": "leafspine:2,2,2",
        "traffic": {"pattern": "allreduce-ring", "transport": "rc"},
        "training": {"iterations": 5, "compute_ms": 20.0}}


def test_flaps_expand_into_link_down_and_up_pairs_on_the_resolved_link():
    s = sc.parse({**BASE, "flaps": {"target": "rank:0/uplink:1", "first_s": 1.0,
                                    "every_s": 3.0, "down_s": 0.5, "count": 2}}, "t.toml")
    assert [(f.at_s, f.kind) for f in s.faults] == [
        (1.0, "link_down"), (1.5, "link_up"), (4.0, "link_down"), (4.5, "link_up")]
    assert {f.label for f in plan(s).faults} == {"s1-s3"}
    assert sc.parse(s.as_dict(), "as run") == s  # the flaps' faults are not added twice


def test_the_failure_rate_per_day_defaults_to_the_flap_rate():
    s = sc.parse({**BASE, "flaps": {"target": "s1-s3", "every_s": 6.0, "count": 1}}, "t")
    assert job_model(plan(s)).failures_per_day == pytest.approx(86400 / 6)
    s = sc.parse({**BASE, "training": {**BASE["training"], "failures_per_day": 3.0}}, "t")
    assert job_model(plan(s)).failures_per_day == 3.0


def test_each_compared_fabric_is_the_scenario_with_its_own_fabric_settings():
    s = sc.parse({**BASE, "compare": [
        {"name": "ib-like", "flow_control": "credit", "reroute": "fast"},
        {"name": "roce-like", "flow_control": "pfc", "reroute": "global",
         "convergence_delay_s": 2.5}]}, "t")
    ib, roce = (sc.variant(s, c) for c in s.compare)
    assert (ib.flow_control, ib.reroute, ib.convergence_delay_s) == (FlowControl.CREDIT,
                                                                      "fast", 0.0)
    assert (roce.flow_control, roce.reroute, roce.convergence_delay_s) == (FlowControl.PFC,
                                                                          "global", 2.5)
    assert roce.name == "t-roce-like" and roce.compare == () and roce.faults == s.faults


@pytest.mark.parametrize(("data", "message"), [
    ({**BASE, "traffic": {"pattern": "alltoall", "transport": "rc"}}, "AllReduce"),
    ({**BASE, "traffic": {"pattern": "allreduce-ring"}}, 'transport = "rc"'),
    ({**BASE, "flaps": {"count": 1}}, "needs a `target`"),
    ({**BASE, "flaps": {"target": "s1-s3", "count": 1, "every_s": 1.0, "down_s": 2.0}},
     "shorter than every_s"),
    ({**BASE, "compare": [{"name": "x", "flow_control": "roce"}]}, "flow_control"),
    ({**BASE, "compare": [{"flow_control": "pfc"}]}, "`name` is required"),
    ({**BASE, "compare": [{"name": "a"}, {"name": "a"}]}, "names must differ"),
    ({**BASE, "compare": [{"name": "a", "reroute": "bgp"}]}, "reroute"),
    ({**BASE, "traffic": {**BASE["traffic"], "rc_timeout_resend": "all"}}, "rc_timeout_resend"),
    ({**BASE, "convergence_delay_s": -1}, "convergence_delay_s"),
])
def test_bad_training_scenarios_are_explained(data, message):
    with pytest.raises(sc.ScenarioError, match=message):
        sc.parse(data, "t.toml")


def test_the_comparison_keeps_each_fabrics_figures_and_the_worst_verdict():
    s = sc.parse({**BASE, "compare": [{"name": "a"}, {"name": "b", "flow_control": "pfc"}]},
                 "t")
    runs = {"a": RunMetrics(verdict="pass", training={"t-a": TrainingMetrics("t-a", 5, 5)}),
            "b": RunMetrics(verdict="incomplete", verdict_reasons=("stopped",),
                            training={"t-b": TrainingMetrics("t-b", 5, 2, interruptions=1)})}
    m = combine(s, "embedded", runs, {"a": "dir-a", "b": "dir-b"})
    assert set(m.training) == {"a", "b"} and m.training["b"].interruptions == 1
    assert m.verdict == "incomplete" and m.verdict_reasons == ("b: stopped",)
    assert m.compared_runs == {"a": "dir-a", "b": "dir-b"}
    assert RunMetrics.from_json(m.to_json()) == m


def test_a_comparison_without_a_training_job_keeps_each_fabrics_headline_figures():
    """[[compare]] is not only for training jobs: each fabric's run figures (the sweep
    table's columns) are kept side by side, and no 'no training figures' is said."""
    base = {k: v for k, v in BASE.items() if k != "training"}
    s = sc.parse({**base, "traffic": {"pattern": "incast", "dst": "h1"},
                  "compare": [{"name": "lossy", "flow_control": "lossy"},
                              {"name": "credit", "flow_control": "credit"}]}, "t")
    runs = {"lossy": RunMetrics(verdict="incomplete", sent=768, received=700, lost=68,
                                verdict_reasons=("68 dropped",)),
            "credit": RunMetrics(verdict="pass", sent=768, received=768, lost=0,
                                 credit_frames=93, cct_ms=194.0)}
    m = combine(s, "embedded", runs, {"lossy": "dir-l", "credit": "dir-c"})
    assert m.problems == () and m.training == {}
    assert m.compared["lossy"]["lost"] == 68 and m.compared["lossy"]["verdict"] == "incomplete"
    assert m.compared["credit"]["credit_frames"] == 93 and m.compared["credit"]["cct_ms"] == 194
    assert RunMetrics.from_json(m.to_json()) == m
    from fabriclab.sweep import sweep_table

    table = sweep_table([{"fabric": n, **f} for n, f in m.compared.items()], first="fabric")
    assert table.splitlines()[0].split()[:3] == ["fabric", "sent", "received"]
    assert table.splitlines()[1].split()[:4] == ["lossy", "768", "700", "68"]


def test_a_training_comparison_says_which_fabric_has_no_figures():
    s = sc.parse({**BASE, "compare": [{"name": "a"}, {"name": "b"}]}, "t")
    runs = {"a": RunMetrics(verdict="pass", training={"t-a": TrainingMetrics("t-a", 5, 5)}),
            "b": RunMetrics(verdict="error", error="switch s1 died")}
    m = combine(s, "embedded", runs, {"a": "dir-a", "b": "dir-b"})
    assert m.problems == ("b: no training figures (switch s1 died)",)
