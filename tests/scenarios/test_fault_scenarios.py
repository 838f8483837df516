"""The measurements the project exists for, asserted on captured traces (Mininet, root).

* link failure during ring AllReduce: with fast reroute and fault notification
  every crossing flow's outage, in both directions, is within 3 x (detection +
  switchover) + a round trip and does not grow from a 4-switch to a 20-switch
  fabric (notification heals the direction a backup cannot); with global
  reroute only the gap is reported; the
  collective completes in both and, in CREDIT mode, the only frames lost are
  those on the failed link, and they are counted.
* pfc-storm: a stalled receiver's pauses spread beyond its switch and the
  victims' goodput drops against a baseline run; the PFC watchdog bounds it;
  under CREDIT with a HoQ lifetime the blocked set stays on the stalled host's
  path and the victims keep most of their goodput.
* deadlock: min-hop on a ring without VL layering stalls (detected, verdict
  "stalled"); up*/down* on the same ring completes.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fabriclab import scenario as sc
from fabriclab.plan import fabric_for
from fabriclab.runner import RunResult, run
from tests.scenarios.result_contract import assert_complete_result, assert_no_leftovers
from tests.scenarios.starved import run_fed, starved
from topologies.targets import TargetError, resolve
from traffic.metrics import RunMetrics
from traffic.recovery import path_links
from traffic.report_model import cell

pytestmark = [pytest.mark.mininet, pytest.mark.slow]

ROUTING = "minhop"  # the scenario's engine


# bmv2 forwards fabric.p4 at ~2.6k packets/s here (bench.bmv2_pps), so on bmv2 the
# scenarios run at BMV2_RATE_PPS (as in test_bmv2_scenarios.py); held frames wait round
# each switch's hold loop (topologies/hold_loop.py), not by recirculation, which starved
# bmv2's input. The registers these tests read (held_at_end, blocked_ns) are derived
# there from the counters fabric.p4 steps beside them (controller/readout.py; blocked_ns
# in 4.19 ms quanta).
BMV2_RATE_PPS = 300
# Measured on simple_switch_grpc 1.15.5 with the embedded compiler at BMV2_RATE_PPS, with
# the hold loop (docs/fabric.md, "Targets"). The PFC storm runs on bmv2 since its links
# are paced in the transmit gate (FabricEgress.egress_pace): 3 of 3 runs passed, 0 lost,
# no headroom drop, victims 0.30-0.32 (0.50-0.58 with the watchdog), 2026-12-05; each run
# still ends 'stalled' with a host blocked by its link and nothing held in a switch (its
# baseline run too), 7818-8102 of 12288 frames sent.
# fabric.p4's receive-buffer updates are single actions, which bmv2 runs with their
# register arrays locked (FabricIngress.buffer_admit, FabricEgress.buffer_release): split
# across actions, its ingress and egress threads lost updates, and up*/down* passed 1 of 5
# runs. With them atomic it passed 4 of 4 (CCT 4.6-4.7 s, 2026-12-05).
BMV2_LINK_FAILURE_SCALE = (
    "bmv2: leafspine's gaps were held to the bound (plus two frame times, see "
    "BMV2_FRAME_STEPS); fattree:4, and so 4 against 20 switches, not: at 300 pps "
    "(2026-12-06) its 20 simple_switch processes on 2 cores carried a crossing flow at 80 "
    "of 300 frames/s before the failure, so the gaps measure their queues, not the "
    "recovery (144.6 < 164.5, 401.3 > 176.8, 252.5 with 1 frame lost that no counter "
    "explains); at 500 pps even leafspine's 4 switches were starved 200-1200 ms; at 150 pps "
    "(2026-12-07) none was, but the gaps (22.2-47.2 ms against bounds of 19.1-20.5 ms) are "
    "frame spacing: detection + switchover took 3.2-3.8 ms, a frame time is 6.7 ms, the "
    "ring's sender spaces frames 6.7-13.3 ms, and the notified detour crosses five switches")


@pytest.fixture(params=["embedded", pytest.param("bmv2", marks=pytest.mark.bmv2)])
def target(request):
    """Each test on the embedded switch and, where simple_switch_grpc is, on real bmv2."""
    try:
        return resolve(request.param)
    except TargetError as exc:
        pytest.skip(str(exc))


# A bmv2 run's traffic phase lasts at least this long: at BMV2_RATE_PPS on 2 cores the
# up*/down* ring (10 s as shipped, CCT 4.6-4.7 s) and the global reroute (20 s, CCT
# 4.0-11.2 s) both ran out of time "with frames still moving (too slow, not stopped)" in
# one full-suite run (2026-12-06). A run ends when its collective completes or its stall
# timeout fires, so the longer limit costs only a run that is slow anyway.
BMV2_MIN_DURATION_S = 40


def _at_target_rate(data: dict, target) -> dict:
    """The scenario at a rate the target holds: BMV2_RATE_PPS on bmv2 (and at least
    BMV2_MIN_DURATION_S), as written else."""
    if target.value == "bmv2":
        data["link"] = {**data["link"], "rate_pps": BMV2_RATE_PPS}
        data["duration_s"] = max(data.get("duration_s", 0), BMV2_MIN_DURATION_S)
    return data


def _print(label: str, metrics, *keys: str) -> None:
    get = metrics.get if isinstance(metrics, dict) else lambda k: getattr(metrics, k)
    print(f"\n{label}: " + ", ".join(f"{k}={get(k)}" for k in keys))


# --------------------------------------------------------------------------- link failure


def _switch_links_on_path(topology: str, src: str, dst: str) -> list[str]:
    """The switch-to-switch links of src -> dst on the routes the SM will install."""
    from controller.lids import LidMap
    from controller.routing import engine

    data = sc.load("link-failure-allreduce").as_dict()
    fabric = fabric_for(sc.parse({**data, "topology": topology}, "probe"))
    lids = LidMap().assign(fabric)
    routes = engine(ROUTING).route(fabric, lids)
    host_of_lid = {lid: name for name, lid in lids.items()}
    links = path_links(fabric, routes, src, lids[dst], host_of_lid)
    return [link for link in links if all(end.startswith("s") for end in link.split("-"))]


def _failed_link_on_path(topology: str, src: str, dst: str) -> str:
    """The first switch-to-switch link of src -> dst on the routes the SM will install."""
    return _switch_links_on_path(topology, src, dst)[0]


def _link_failure(tmp_path, target, topology: str, hosts: list[str], reroute: str = "fast",
                  link: str | None = None, rate_pps: int | None = None,
                  slack_ms: float | None = None) -> dict:
    """The scenario with `link` failing at 0.1 s, run (again, when it failed while a switch
    waited for a CPU: starved.py) and checked; with `slack_ms`, every crossing flow's gap
    is also held to the bound plus that slack."""
    data = sc.load("link-failure-allreduce").as_dict()
    link = link or _failed_link_on_path(topology, hosts[0], hosts[1])
    data.update(topology=topology, reroute=reroute, duration_s=20, routing=ROUTING,
                faults=[{"at_s": 0.1, "kind": "link_down", "target": link}])
    data["traffic"] = {**data["traffic"], "hosts": hosts}
    if rate_pps is not None:
        data["link"] = {**data["link"], "rate_pps": rate_pps}
    scenario = sc.parse(_at_target_rate(data, target), f"link failure on {topology}")
    result = run_fed(lambda k: run(scenario, target, tmp_path / f"attempt{k}"),
                     failed=lambda m: bool(_link_failure_faults(m, slack_ms)),
                     what=f"link failure on {topology} ({link})")
    m = result.metrics
    assert m.error is None, m.error
    _print(f"{topology} {reroute} ({link})", m, "verdict", "recovery_gap_ms",
           "recovery_gap_by_direction", "detection_ms", "switchover_ms", "rtt_ms",
           "delivery_gap_ms", "lost_in_fabric", "lost_on_failed_links", "unexplained_loss",
           "cct_ms", "switch_cpu")
    # the collective completes; every PSN arrives (RC retransmits what the link lost)
    assert m.verdict == "pass", (m.verdict, m.verdict_reasons, m.problems)
    assert m.cct_ms is not None and m.lost == 0
    # CREDIT is lossless: what the fabric lost was on the failed link, and counted
    assert m.lost_on_failed_links is not None
    assert m.unexplained_loss <= 0, m.problems
    assert m.lost_in_fabric <= m.lost_on_failed_links + sum(
        (m.drops_by_reason or {}).values())
    assert m.recovery_gap_ms is not None, "a flow crossed the failed link"
    assert m.held_in_fabric == 0, m.held_at_end  # every switch buffer empty at the end
    if slack_ms is not None:
        assert len(m.recovery_gap_by_direction or {}) == 2, \
            f"both ring flows cross {link}: {m.recovery}"
        over = _over_bound(m, slack_ms)
        assert not over, (f"{topology}: " + "; ".join(over) + f" (starved: {starved(m)})")
    return m


def _link_failure_faults(m, slack_ms: float | None) -> list[str]:
    """Why a link-failure run fails the checks above ([]: it passes them)."""
    if m.error is not None:
        return [m.error]
    faults = [] if m.verdict == "pass" and m.cct_ms is not None and m.lost == 0 else ["verdict"]
    if (m.unexplained_loss or 0) > 0 or m.recovery_gap_ms is None or m.held_in_fabric:
        faults.append("loss, gap or held frames")
    if slack_ms is not None and not faults:
        faults += _over_bound(m, slack_ms)
    return faults


def _bound_ms(m) -> float:
    """The issue's bound on every crossing flow's gap: 3 x (detection + switchover) + one
    round trip, all measured in the same run."""
    assert None not in (m.detection_ms, m.switchover_ms, m.rtt_ms), m.sm_timeline
    return 3 * (m.detection_ms + m.switchover_ms) + m.rtt_ms


def _over_bound(m, slack_ms: float) -> list[str]:
    """Every crossing flow whose gap exceeds the bound plus `slack_ms`, said."""
    bound = _bound_ms(m)
    return [f"flow {flow} ({gap.direction}) silent {gap.gap_ms} ms > 3 x ({m.detection_ms} + "
            f"{m.switchover_ms}) + {m.rtt_ms}" + (f" + {slack_ms:.1f}" if slack_ms else "")
            + f" = {bound + slack_ms:.1f} ms"
            for flow, gap in m.recovery.items()
            if gap.gap_ms is None or gap.gap_ms > bound + slack_ms]


# The two ring flows cross the failed link in opposite directions. Failed next to the
# first rank, the flow it sends goes up into the link at a switch with a backup port
# (a local switchover) and the reverse flow comes down into it at a switch without one
# (fault notification upstream); failed next to the second rank, the other way round.
SIZES = [("leafspine:2,2,1", ["h1", "h2"]), ("fattree:4", ["h1", "h5"])]
# Both sizes at a rate this 2-core machine carries with 20 switch processes: at the
# scenario's 2000 frames/s fattree:4 is CPU-bound (~310 frames/s per flow), every RC
# window stands in the switch queues and the gap measures those queues, not the
# recovery (docs/controller.md, "What the 20-switch gap is made of").
SCALE_RATE_PPS = 500
# On bmv2 (BMV2_RATE_PPS) detection + switchover take 2.5-4.4 ms, about one frame time,
# and a flow's gap moves in frame-time steps: up to one until the first frame after the
# switchover leaves its sender on schedule, and one to resend what the link lost at
# the pace. So on bmv2 the bound gets those two frame times (6.7 ms at 300 frames/s;
# 6 leafspine runs, 2026-12-07: gaps 7-19 ms against bounds 13-19 ms, 3 over by 0.5-2.7
# ms without them).
BMV2_FRAME_STEPS = 2


@pytest.mark.parametrize("where", ["first-rank", "second-rank"])
def test_link_failure_gap_in_both_directions_is_within_the_same_bound_on_4_and_20_switches(
        tmp_path, target, where):
    bmv2 = target.value == "bmv2"
    # FABRICLAB_NO_BMV2_SKIP=1 runs fattree:4 on bmv2 too, to measure it
    sizes = SIZES[:1] if bmv2 and not os.environ.get("FABRICLAB_NO_BMV2_SKIP") else SIZES
    slack_ms = BMV2_FRAME_STEPS * 1000 / BMV2_RATE_PPS if bmv2 else 0.0
    runs = {}
    for topology, hosts in sizes:
        links = _switch_links_on_path(topology, hosts[0], hosts[1])
        link = links[0] if where == "first-rank" else links[-1]
        runs[topology] = _link_failure(
            tmp_path / topology.replace(":", "-"), target, topology, hosts, link=link,
            rate_pps=None if bmv2 else SCALE_RATE_PPS, slack_ms=slack_ms)
    if len(runs) < 2:
        pytest.skip(BMV2_LINK_FAILURE_SCALE)  # leafspine's bound was asserted above
    # Both sizes are held to the same bound, made of quantities local to the failed
    # link (its agents' detection and switchover) and to the flows (their round trip):
    # nothing in it grows with the number of switches. The raw gaps are printed: the
    # locally protected direction is the same on both sizes (8-16 ms at 500 frames/s),
    # the notification-healed one is longer on fattree:4: its notification goes two
    # switch hops up, through the cores (36-55 ms against 12-20 ms while NOTIFY frames
    # queued behind data; with them in the top egress queue 16-21 against 8-16 ms,
    # 2026-12-05); docs/controller.md.
    small, large = (runs[t] for t, _h in SIZES)
    _print(f"largest gap / bound, 4 vs 20 switches ({where})",
           {"4": f"{small.recovery_gap_ms:.1f} / {_bound_ms(small):.1f}",
            "20": f"{large.recovery_gap_ms:.1f} / {_bound_ms(large):.1f}"}, "4", "20")


def test_global_reroute_only_gap_is_reported_and_the_collective_completes(tmp_path, target):
    m = _link_failure(tmp_path, target, "leafspine:2,2,1", ["h1", "h2"], reroute="global")
    reroutes = [r for r in m.sm_timeline if r.get("global_reroute_ms") is not None]
    assert reroutes, "the SM logged the global reroute"
    assert m.recovery_gap_ms > 0


# --------------------------------------------------------------------------- pfc-storm


def _storm_at_target(data: dict, target) -> dict:
    """The storm at the target's rate, with its time scales kept on bmv2.

    The all-to-all's 12288 frames need 14 s of line rate per host link at bmv2's 300
    frames/s, with nothing to spare for the stall: on bmv2 it is a quarter of the volume
    (PFC: every run ended unfinished at 7818-8102 frames, 2026-12-05), still sending
    through the whole stall. The scenario's HoQ lifetime (100 ms) is 200 frame times
    at its 2000 frames/s, far above a busy port's queueing, so only the stalled path
    lets frames go. At 300 frames/s one full receive buffer (32 frames) alone takes 107
    ms to leave: a 100 ms lifetime discarded frames on every congested port (478-1211
    HoQ drops in the fault-free baseline, 2026-12-05). On bmv2 the lifetime is scaled by
    the rate ratio (the same 200 frame times)."""
    # on bmv2 also BMV2_MIN_DURATION_S: the goodput window ends at the unstall (1.5 s),
    # so only completion gains (a full-suite run ran out of the shipped 20 s at 2469 of
    # 3072 frames, 2026-12-06, where runs alone take 8.5-11 s)
    data = _at_target_rate(data, target)
    if target.value != "bmv2":
        return data
    data["traffic"] = {**data["traffic"], "message_bytes": data["traffic"]["message_bytes"] // 4}
    if data.get("flow_control") == "credit":
        scale = sc.load("pfc-storm").link.rate_pps / BMV2_RATE_PPS
        data["credit"] = {**data["credit"],
                          "hoq_lifetime_us": round(data["credit"]["hoq_lifetime_us"] * scale)}
    return data


def _storm(tmp_path, target, complete: bool = True, must_pass: bool = False,
           **changes) -> RunResult:
    data = sc.load("pfc-storm").as_dict()
    for key, value in changes.items():
        if isinstance(value, dict):
            data[key] = {**data[key], **value}
        else:
            data[key] = value
    # a run that lost frames while a switch waited for a CPU runs again (starved.py)
    result = run_fed(lambda k: run(sc.parse(_storm_at_target(data, target), "pfc-storm"),
                                   target, tmp_path / f"attempt{k}"),
                     failed=lambda m: (complete and m.lost > 0) or bool(m.unexplained_loss)
                     or (must_pass and m.verdict != "pass"),
                     what=f"pfc-storm {changes}")
    m = result.metrics
    assert m.error is None, m.error
    _print(f"pfc-storm {changes}", m, "verdict", "victim_goodput_ratio", "cct_ms", "sent",
           "lost", "lost_in_fabric", "unexplained_loss", "drops_by_reason", "pause_frames",
           "credit_frames", "held_in_fabric")
    print("longest wait for a CPU per switch, ms: " + ", ".join(
        f"{sw} {w['longest_starved_ms']:g}"
        for sw, w in ((m.switch_cpu or {}).get("switches") or {}).items()))
    print("blocked/paused ports: " + ", ".join(
        f"{p.switch}:{p.port} {p.blocked_ms:.0f} ms/{p.pauses_sent}" for p in m.paused_ports))
    assert m.victim_goodput.baseline_pps, m.victim_goodput
    # the application loses nothing (RC retransmits what a switch discarded), unless the
    # run drops on purpose (the watchdog: a queue pair may exhaust its retries while its
    # path is paused, 128 lost in one run); every frame the fabric lost is a counted
    # drop either way. Completion within the run is printed, not required: on a loaded
    # machine the storm's pause chains can outlast the run's stall timeout (11534 of
    # 12288 frames sent, nothing lost, in one full-suite run).
    if complete:
        assert m.lost == 0, (m.verdict, m.verdict_reasons)
    assert m.unexplained_loss <= 0, m.problems
    return result


STALL_S = 1.2  # the scenario stalls h1 from 0.3 s to 1.5 s


def _blocked(m: dict, share: float = 0.1) -> set[tuple[str, int]]:
    """Egress gates blocked for at least `share` of the stall."""
    return {(p.switch, p.port) for p in m.paused_ports
            if p.blocked_ms >= share * STALL_S * 1e3}


def _baseline_blocked(m) -> dict[tuple[str, int], float]:
    """Each port's blocked time (ms) in the run's fault-free baseline (`baseline = true`)."""
    base = RunMetrics.read(Path(m.baseline_run) / "metrics.json")
    return {(p.switch, p.port): p.blocked_ms for p in base.paused_ports}


def _spread(m, share: float = 0.1) -> set[tuple[str, int]]:
    """Egress gates blocked at least `share` of the stall longer than in the baseline."""
    base = _baseline_blocked(m)
    return {(p.switch, p.port) for p in m.paused_ports
            if p.blocked_ms - base.get((p.switch, p.port), 0.0) >= share * STALL_S * 1e3}


def test_pfc_storm_spreads_pauses_and_slows_victims_and_the_watchdog_bounds_it(tmp_path,
                                                                              target):
    result = _storm(tmp_path / "pfc", target)
    storm = result.metrics
    if target.value == "embedded":  # the shipped scenario as it is: its result contract
        assert_complete_result(result.run_dir, sc.load("pfc-storm"))
        assert storm.verdict in ("pass", "incomplete", "stalled"), storm.verdict_reasons
        assert_no_leftovers(storm.run_prefix)
    # PFC loses nothing but what overflows the headroom, counted (0 and 63 of 12288 frames
    # in two runs: a loaded machine delays a pause); the RC transport resends those
    assert set(storm.drops_by_reason) <= {"headroom"}, storm.drops_by_reason
    pausing = {p.switch for p in storm.paused_ports if p.pauses_sent}
    assert pausing - {"s1"}, f"pauses stayed at h1's switch: {storm.paused_ports}"
    assert storm.victim_goodput_ratio < 0.5  # flows that never touch h1 slow down
    # the blocked set spreads past h1's switch too (blocked_ns; blocked_quanta on bmv2)
    assert {sw for sw, _port in _blocked(storm)} - {"s1"}, storm.paused_ports
    bounded = _storm(tmp_path / "watchdog", target, complete=False,
                     pfc={"watchdog_detect_us": 100000, "watchdog_restore_us": 400000}).metrics
    assert bounded.drops_by_reason.get("watchdog", 0) > 0
    assert bounded.victim_goodput_ratio > storm.victim_goodput_ratio + 0.1


def test_credit_with_hoq_lifetime_keeps_the_blocked_set_on_the_stalled_path(tmp_path, target):
    m = _storm(tmp_path, target, must_pass=target.value == "bmv2",
               flow_control="credit").metrics
    fabric = fabric_for(sc.parse(sc.load("pfc-storm").as_dict(), "pfc-storm"))

    def port_to(switch: str, peer: str) -> tuple[str, int]:
        return switch, next(p for p, n, _pp in fabric.neighbours(switch) if n == peer)

    # the egress ports towards h1: s1 -> h1, the spine s3 -> s1, the other leaf s2 -> s3
    on_path = {port_to("s1", "h1"), port_to("s3", "s1"), port_to("s2", "s3")}
    if target.value == "bmv2":
        # At 300 frames/s the leaves' uplinks are the bottleneck of the all-to-all
        # (2 hosts' traffic into one uplink): credit-blocked for 0.3-2.7 s in the
        # fault-free baseline too (4 runs, 2026-12-06), so the stalled path is blocked
        # and the rest is congestion of its own; printed, not asserted.
        assert on_path <= _blocked(m), (m.paused_ports, on_path)
        # It completes, where its switches kept up. Starved (switch_cpu), bmv2's hold
        # loops can leave the held queues out of ticket order until the run times out
        # (docs/fabric.md, Targets): 2 of 4 clean-clone suite runs, their switches
        # waiting 0.5-1.2 s for a CPU; asserted after ATTEMPTS starved runs, not earlier.
        hungry = starved(m)
        if m.verdict != "pass" and hungry:
            print(f"completion not asserted: {m.verdict} ({'; '.join(m.verdict_reasons)}) "
                  f"in every attempt, switches starved {hungry} ms")
        else:
            assert m.verdict == "pass" and m.lost == 0, m.verdict_reasons
    else:
        # the stall's spread: blocked longer than the same port in the fault-free
        # baseline. A leaf's uplink is credit-blocked by the all-to-all's own congestion
        # too (s1:3 122 ms in one no-p4ref clean-clone run, 2026-12-07, beside 1506 ms
        # at s3:1): that is not the storm's, and the PFC test compares with it as well
        spread = _spread(m)
        assert spread and spread <= on_path, (m.paused_ports, _baseline_blocked(m), on_path)
    assert not any(p.pauses_sent for p in m.paused_ports)
    let_go = m.drops_by_reason.get("hoq_lifetime", 0)
    if target.value == "bmv2" and not let_go and starved(m):
        # A clean clone, 2026-12-07: the first attempt stalled starved (278 frames let
        # go), the second passed with its switches waiting 0.5-0.7 s for a CPU and the
        # victims at 0.89 of their goodput: the storm never held a queue past the
        # lifetime. Excused only where switches starved, as the completion above.
        print(f"hoq_lifetime drops not asserted: none, switches starved {starved(m)} ms")
    else:
        assert let_go > 0  # the lifetime let go
    ratio = m.victim_goodput_ratio
    assert ratio >= 0.1  # the victims keep a share of their goodput (0.24-0.38 seen) ...
    report = (Path(m.baseline_run).parents[1] / "report.md").read_text()
    assert "victim" in report.lower() and cell(ratio) in report  # ... the report states


# --------------------------------------------------------------------------- deadlock


@pytest.mark.parametrize(("routing", "verdict"), [("minhop", "stalled"), ("updn", "pass")])
def test_min_hop_on_a_ring_deadlocks_without_vl_layering_and_up_down_completes(
        tmp_path, target, routing, verdict):
    data = sc.load("cyclic-dependency-deadlock").as_dict()
    data.update(routing=routing, sweep={})
    m = run(sc.parse(_at_target_rate(data, target), "deadlock"), target, tmp_path).metrics
    assert m.error is None, m.error
    _print(f"deadlock {routing}", m, "verdict", "stalled_after_s", "held_in_fabric",
           "deadlock_problem", "cct_ms")
    assert m.verdict == verdict, (m.verdict_reasons, m.problems)
    if verdict == "stalled":
        assert "VL layering turned off" in m.deadlock_problem
        assert m.blocked_hosts and m.stalled_after_s is not None
        # the frames sit in the switches of the cycle, read from their registers
        held = {h.switch for h in m.held_at_end if h.buffered}
        assert m.held_in_fabric > 0 and len(held) >= 3, m.held_at_end
    else:
        assert m.deadlock_problem is None and m.cct_ms is not None
        assert m.held_in_fabric == 0, m.held_at_end
