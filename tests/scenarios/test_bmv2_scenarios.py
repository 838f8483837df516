"""The incast and stream scenarios on both switches, with what must agree and what may not.

Real bmv2 runs where simple_switch_grpc is on PATH (marker `bmv2`), fed by p4c
where installed, else by the embedded compiler. bmv2 forwards fabric.p4 at a few
thousand packets/s here (bench.bmv2_pps), so both targets run the incast at
BMV2_RATE_PPS, a scale at which bmv2 keeps up when nothing is held.

Must agree on both: every stream frame arrives once and in order; the unknown-DLID
frames are counted as no_route; what LOSSY incast loses is counted as tail drops
(every frame on the embedded switch; on bmv2 all but at most 2% of the frames sent,
dropped at its input where no P4 counter sees them: 0-1 of 768 measured), and no other
drop reason appears (a stray IPv6 frame from a switch port started later was once a
`not_fabric` drop: network.P4Switch.quiet_ports); in every
mode nothing is reordered or duplicated, no switch dies, and the lossless modes
exchange their flow-control frames.

May differ (measured, see docs/fabric.md "Targets"):
* how many frames LOSSY drops: on p4ref's bmv2 (no Thrift) tc shapes the link
  after the pipeline, so most of the backlog waits in the qdisc, not in fabric.p4's
  buffer (incast at 300 pps: 13-31 tail drops on bmv2, 0 in 1 run of 34, 384-385 on
  the embedded switch);
* pause/credit frame counts and the completion time.

PFC and CREDIT lose nothing on both (asserted). CREDIT on bmv2 used to be skipped when
it lost: 0-27 frames while tc sent CREDIT frames ahead of queued data, and a delivered
frame stayed counted while fc_buffer's updates raced across bmv2's threads; both were
fixed (2026-12-05) and every suite run since passed it.

On bmv2 without Thrift the link rate is a tc shaper after the pipeline
(topologies/link_rates.py): the frames a switch let through
its egress gate waited in the qdisc, more of them than the headroom, so the pause came
too late (219-225 lost, 159-164 of them headroom drops, 3 runs). The SM therefore gives
such links a pacer in the gate (FabricEgress.egress_pace), which keeps that backlog
within a quarter of the headroom: 0 lost in 12 runs beside the suite's parallel part, CCT
2557-2751 ms (embedded: 2561-2594), busiest buffer peaks 23-30 of 48. With half the headroom
as the bound the peaks reached 40 and one CI run in ~70 lost 12 frames at the headroom.
Another CI run lost 81 with a quarter: the NICs (real time) went on sending while the
switches waited 250-330 ms for a CPU, so the frames piled up where no pause counts them.
The run now says so (RunMetrics.switch_cpu, topologies/cpu_wait.py) and a lossless run
that lost frames while a switch was starved runs again (tests/scenarios/starved.py).
Held frames wait in each switch's hold loop (topologies/hold_loop.py).
"""

from __future__ import annotations

import json

import pytest

from fabriclab import scenario as sc
from fabriclab.runner import run
from tests.scenarios.starved import run_fed
from topologies.targets import SwitchKind, TargetError, resolve

pytestmark = [pytest.mark.mininet, pytest.mark.slow]

BMV2_RATE_PPS = 300
BMV2_UNCOUNTED_SHARE = 0.02  # of the frames sent; measured 0-1 of 768 in LOSSY


@pytest.fixture(scope="module", params=["embedded", pytest.param("bmv2", marks=pytest.mark.bmv2)])
def target(request):
    try:
        return resolve(request.param)
    except TargetError as exc:
        pytest.skip(str(exc))


def _incast(flow_control: str) -> sc.Scenario:
    data = sc.load("incast").as_dict()
    data["flow_control"] = flow_control
    data["link"] = {**data["link"], "rate_pps": BMV2_RATE_PPS}
    return sc.parse(data, f"incast ({flow_control}, {BMV2_RATE_PPS} pps)")


@pytest.fixture(scope="module")
def incast_runs(target, tmp_path_factory):
    """{mode: the run's result}, the three modes one after the other."""
    out = {}
    for mode in ("lossy", "pfc", "credit"):
        # a lossless run that lost frames while a switch waited for a CPU runs again
        result = run_fed(lambda _k, mode=mode: run(_incast(mode), target,
                                                   tmp_path_factory.mktemp(mode)),
                         failed=lambda m, mode=mode: mode != "lossy" and m.lost > 0,
                         what=f"{target.label} incast {mode}")
        m = result.metrics
        print(f"\n{target.label} incast {mode} at {BMV2_RATE_PPS} pps: " + ", ".join(
            f"{k}={getattr(m, k)}" for k in ("verdict", "sent", "received", "lost",
                                        "unexplained_loss", "drops_by_reason", "cct_ms",
                                        "pause_frames", "credit_frames",
                                        "link_rate_enforcement", "switch_cpu")))
        assert m.error is None, m.error
        out[mode] = result
    return out


@pytest.fixture(scope="module")
def incast(incast_runs):
    """{mode: the run's metrics}."""
    return {mode: result.metrics for mode, result in incast_runs.items()}


def _where_dropped(result) -> str:
    """A lossless run's drop counters by switch port and the busiest receive buffers' peaks
    against XOFF + headroom, for a failure message."""
    counters = json.loads((result.run_dir / "counters.json").read_text())
    drops = {sw: cells for sw, cells in counters.items() if sw != "run_id" and cells}
    telemetry = json.loads((result.run_dir / "telemetry.json").read_text())
    peaks = sorted(((max(cell.get("buffer_peak") or [0]), f"{sw}:{port}")
                    for sw, ports in telemetry.items() for port, cell in ports.items()),
                   reverse=True)[:3]
    cpu = result.metrics.switch_cpu or {}
    waits = {sw: w["longest_starved_ms"] for sw, w in (cpu.get("switches") or {}).items()}
    return (f"drops {drops}; busiest receive buffers (peak, switch:port) {peaks}; longest "
            f"wait for a CPU per switch, ms {waits}, steal {cpu.get('steal_max_ms')} ms")


def test_stream_arrives_whole_in_order_on_both(target, stream_run):
    result = stream_run(target).result  # the run test_stream_slice.py asserts on too
    m = result.metrics
    assert m.error is None, m.error
    assert (m.sent, m.lost, m.reordered, m.duplicates) == (m.received, 0, 0, 0)
    assert m.checks["unknown_dlid"].ok and m.verdict == "pass"
    assert m.link_rate_enforcement
    # where held frames wait, as this run made it: bmv2 round each switch's hold loop
    versions = json.loads((result.run_dir / "versions.json").read_text())
    expected = ("hold loop on every switch" if target.switch is SwitchKind.BMV2
                else "recirculation on every switch: the embedded switch")
    assert versions["held_frames"].startswith(expected), versions["held_frames"]
    assert len(m.hold_loops) == (2 if target.switch is SwitchKind.BMV2 else 0)


def test_lossy_incast_loss_is_counted_tail_drops_on_both(target, incast):
    m = incast["lossy"]
    assert set(m.drops_by_reason) <= {"tail"}, m.drops_by_reason
    if target.switch is SwitchKind.BMV2:
        # most of the backlog waits in tc's qdisc after the pipeline (module doc): fabric.p4
        # may see no overflow at all (1 run in 34: none lost, CCT the receiver's line rate)
        # bmv2 drops the odd arrival no P4 counter sees (module doc): bounded, not zero
        assert m.unexplained_loss <= BMV2_UNCOUNTED_SHARE * m.sent, m.problems
        assert m.drops_by_reason.get("tail", 0) + m.unexplained_loss == m.lost
        return
    assert m.lost > 0 and m.unexplained_loss == 0
    assert m.drops_by_reason["tail"] == m.lost


@pytest.mark.parametrize("mode", ["lossy", "pfc", "credit"])
def test_no_reordering_duplicates_or_crash_in_any_mode(incast, mode):
    m = incast[mode]
    assert (m.reordered, m.duplicates) == (0, 0)
    assert not m.crashed_switches


def test_lossless_modes_exchange_their_flow_control_frames(incast):
    assert incast["pfc"].pause_frames > 0
    assert incast["credit"].credit_frames > 0


@pytest.mark.parametrize("mode", ["pfc", "credit"])
def test_lossless_incast_loses_nothing(target, incast_runs, mode):
    m = incast_runs[mode].metrics
    assert (m.sent, m.lost) == (m.received, 0), (m.drops_by_reason, m.problems,
                                                 _where_dropped(incast_runs[mode]))
    assert not m.held_in_fabric, m.held_at_end
    assert m.cct_ms is not None and m.verdict == "pass", m.verdict_reasons
