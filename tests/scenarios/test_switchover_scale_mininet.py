"""The local switchover does not grow with the fabric; the global reroute is reported.

leafspine:2,2,1 (4 switches) and fattree:4 (20 switches) in Mininet, a local
agent process per switch (fabriclab/agents.py), the SM serving their reports.
A few leaf-to-spine (edge-to-aggregation) cables are set down on both ends, as
traffic/faults.py does, and brought back; the SM's timeline gives, for every
end that lost carrier, detected -> port_down written (the local switchover,
the agent's own P4Runtime write), and for the first report of each cable
detected -> routes installed everywhere (the global reroute).
"""

from __future__ import annotations

import json
import statistics
import time

import pytest

from topologies.description import NodeKind
from topologies.generators import build
from traffic.faults import LinkEnd, set_link

pytestmark = [pytest.mark.mininet, pytest.mark.slow]

FAILURES_PER_FABRIC = 3
SWITCHOVER_BOUND_MS = 50.0


def _leaf_uplinks(fabric, count: int):
    """The first `count` cables from a tier-0 switch to a tier-1 switch, over distinct leaves
    where there are enough."""
    tier = {n.name: n.tier for n in fabric.nodes if n.kind is NodeKind.SWITCH}
    ups = [lk for lk in fabric.links if tier.get(lk.a) == 0 and tier.get(lk.b) == 1]
    return (ups * count)[:count]


def _wait_for(sm, link: str, event: str, ends: int, timeout: float = 10.0) -> list[dict]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = [r for r in list(sm.timeline) if r.get("link") == link and r["event"] == event]
        if len(got) >= ends:
            return got
        time.sleep(0.01)
    raise AssertionError(f"{event} on {link}: {len(got)} of {ends} reports within {timeout} s; "
                         f"timeline {json.dumps(sm.timeline)[-800:]}")


def _fail_links(mininet_fabric, topology: str, tmp_path) -> dict:
    fabric = build(topology)
    net, sm, ledger = mininet_fabric.start(fabric)
    sm.assign_lids()
    sm.install_routes()
    sm.start_event_loop(tmp_path / f"timeline-{topology.replace(':', '-')}.jsonl")
    t0 = time.monotonic()
    mininet_fabric.agents(net, sm, ledger)
    agents_s = time.monotonic() - t0
    switchover, reroute = [], []
    for link in _leaf_uplinks(fabric, FAILURES_PER_FABRIC):
        name = f"{link.a}:{link.a_port}-{link.b}:{link.b_port}"
        ends = [LinkEnd(net.intf(link.a, link.a_port)), LinkEnd(net.intf(link.b, link.b_port))]
        set_link(ends, up=False)
        downs = _wait_for(sm, name, "port_down", 2)
        assert all("switchover_error" not in r for r in downs), downs
        switchover += [r["switchover_ms"] for r in downs]
        first = next(r for r in downs if "note" not in r)
        assert "error" not in first, first
        reroute.append(first["global_reroute_ms"])
        set_link(ends, up=True)
        _wait_for(sm, name, "port_up", 2)
    return {"topology": topology, "switches": len(fabric.switches),
            "agents_ready_s": round(agents_s, 2), "switchover_ms": switchover,
            "switchover_median_ms": statistics.median(switchover),
            "switchover_max_ms": max(switchover), "global_reroute_ms": reroute,
            "global_reroute_median_ms": statistics.median(reroute)}


def test_local_switchover_time_does_not_grow_with_fabric_size(mininet_fabric, tmp_path,
                                                              record_property):
    small = _fail_links(mininet_fabric, "leafspine:2,2,1", tmp_path)
    mininet_fabric.stop_all()  # one emulation at a time
    large = _fail_links(mininet_fabric, "fattree:4", tmp_path)
    for m in (small, large):
        print(f"{m['topology']:>16} ({m['switches']:2} switches): switchover median "
              f"{m['switchover_median_ms']:.2f} ms, max {m['switchover_max_ms']:.2f} ms; "
              f"global reroute median {m['global_reroute_median_ms']:.2f} ms "
              f"{m['global_reroute_ms']}; agents ready in {m['agents_ready_s']} s")
        record_property(m["topology"], json.dumps(m))
    for m in (small, large):
        assert m["switchover_max_ms"] < SWITCHOVER_BOUND_MS, m
    assert large["switchover_median_ms"] <= 3 * small["switchover_median_ms"] + 10, \
        (small, large)
