"""Runs one scenario end to end and leaves a complete result directory (docs/run.md).

A run is a pipeline of stages, each owned by the part that does the work, with
typed hand-offs:

    plan        fabriclab/plan.py        Scenario -> RunPlan (fabric, ranks, faults);
                                         refuses what cannot run, before anything starts
    fabric      topologies/network.py    RunPlan -> EmulatedNetwork (switches, hosts)
    bring-up    controller/bringup.py    -> Bringup (pipeline, cabling checked against the
                                         plan, LIDs, routes, flow control, address book)
    traffic     fabriclab/traffic_run.py -> TrafficRun (NICs' logs, captures, faults)
    readout     controller/readout.py    -> Readout (drop counters, telemetry)
    metrics     fabriclab/measure.py     -> the figures; traffic/verdict.py the verdict
    report      traffic/report.py        metrics.json -> report.md, report.html

With a ViewOptions, the live view (fabriclab/view.py, controller/liveview) samples the
switches from bring-up to readout and its replay is written beside the report.

Teardown removes exactly what the run created. A run that fails still writes what it
has, with verdict "error" and why.
"""

from __future__ import annotations

import sys
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from fabriclab import results, training_job
from fabriclab.plan import LINK_FAULTS, RunPlan, plan
from fabriclab.qos_compare import needs_comparison, run_compared
from fabriclab.scenario import Scenario
from fabriclab.status import StatusLine
from fabriclab.view import ViewOptions
from topologies import capacity, distributed
from topologies.ledger import Ledger, cleanup_stale
from topologies.link_rates import LINK_SHAPING_DROP
from topologies.network import EmulatedNetwork, host_macs, port_params, start_network
from topologies.targets import Target, compile_program
from traffic.flow_control import FlowControl
from traffic.metrics import SCHEMA, MetricsSchemaError, RunMetrics
from traffic.verdict import decide

# Egress queues per switch port: one per VL with class queues, and in every run the top
# one for NOTIFY frames, ahead of the data (controller/bringup.NOTIFY_PRIORITY).
PRIORITY_QUEUES = 8

ROOT = Path(__file__).resolve().parent.parent
FABRIC_P4 = ROOT / "p4src" / "fabric.p4"
IMPLEMENTED_FLOW_CONTROL = tuple(FlowControl)
VICTIM_FAULTS = ("stall", "pause_storm")


@dataclass
class RunResult:
    run_dir: Path
    metrics: RunMetrics

    @property
    def ok(self) -> bool:
        return self.metrics.ok


def run(scenario: Scenario, target: Target, results_root: Path,
        status: StatusLine | None = None, program_source: Path = FABRIC_P4,
        view: ViewOptions | None = None) -> RunResult:
    status = status or StatusLine()
    run_plan = plan(scenario)  # a fault that means nothing here is refused before anything
    if needs_comparison(scenario):  # partitions/QoS: solo and per-policy runs
        return run_compared(scenario, target, results_root, status, program_source, run)
    run_dir = results.new_run_dir(results_root, scenario.name)
    results.write_json(run_dir / "scenario.json", scenario.as_dict())
    results.write_json(run_dir / "versions.json", results.versions(target))
    metrics: dict = {"scenario": scenario.name, "target": target.value,
                     "flow_control": scenario.flow_control.value}
    for line in cleanup_stale():
        print(f"cleaned up after an interrupted run: {line}", file=sys.stderr)
    baseline = None
    if (scenario.baseline or scenario.training.iterations) and scenario.faults:
        # The same run without its faults, first (one emulation at a time): what the
        # victims' goodput and a training job's efficiency are measured against.
        status.set_phase("baseline: the same run without faults")
        baseline = run(replace(scenario, faults=(), baseline=False), target,
                       run_dir / "baseline", status, program_source)
    ledger = Ledger.create(run_dir.name)
    metrics["run_prefix"] = ledger.prefix
    net: EmulatedNetwork | None = None
    try:
        net, program = _build_fabric(run_plan, target, program_source, ledger, run_dir,
                                     status, metrics)
        metrics.update(_on_the_fabric(run_plan, net, program, run_dir, ledger, status, view))
        if baseline is not None and scenario.baseline:
            metrics.update(_victims(run_plan, run_dir, metrics, baseline))
        if scenario.training.iterations:
            metrics.update(training_job.figures(
                run_plan, metrics, baseline.metrics if baseline is not None else None))
    except Exception as exc:  # noqa: BLE001 - a failed run still writes what it has
        metrics["error"] = f"{type(exc).__name__}: {exc}"
    finally:
        status.set_phase("tearing down")
        _crashes(net, metrics)
        if net is not None and net.loops:
            metrics["hold_loop_frames"] = net.hold_loop_stats()
        leftovers = net.stop() if net is not None else ledger.teardown()
        if leftovers:
            metrics.setdefault("problems", []).append("teardown left: " + ", ".join(leftovers))
        typed = _finish(run_plan, metrics, run_dir)
    return RunResult(run_dir, typed)


def _build_fabric(run_plan: RunPlan, target: Target, program_source: Path, ledger: Ledger,
                  run_dir: Path, status: StatusLine, metrics: dict):
    """Stage: the emulated fabric (the plan's description, checked against this host's
    capacity) with its switches started, and the program compiled for them."""
    status.set_phase("building topology")
    fabric = run_plan.fabric
    results.write_json(run_dir / "topology.json", asdict(fabric))
    cluster = run_plan.scenario.cluster
    placement = None
    if cluster.servers:
        placement = distributed.plan_placement(fabric, cluster, run_plan.scenario.seed)
    fit = capacity.check(fabric, switch=target.switch.value)
    metrics["capacity"] = fit.as_dict()
    if placement is not None:
        metrics["capacity"]["per_server"] = capacity.per_server(fabric, placement)
    for warning in fit.warnings:
        print(f"fabriclab: warning: {warning}", file=sys.stderr)
    if not fit.fits:
        raise capacity.CapacityError(fit.warnings[0])
    status.set_phase(f"compiling {program_source.name} ({target.value})")
    program = compile_program(target, program_source, ROOT / "build" / "p4")
    servers = None
    if placement is not None:
        status.set_phase(f"making servers {cluster.servers}")
        servers = distributed.make_servers(cluster, ledger, run_dir)
    status.set_phase(f"starting {len(fabric.switches)} switches and {len(fabric.hosts)} hosts"
                     + (f" on {len(servers.servers)} servers" if servers else ""))
    queues = PRIORITY_QUEUES
    try:
        net = start_network(fabric, target, ledger, run_dir / "logs", port_params(fabric),
                            servers=servers, placement=placement, priority_queues=queues,
                            constants=program.constants)
    except BaseException:
        if servers is not None:
            servers.close()
        raise
    metrics["link_rate_enforcement"] = sorted(set(net.link_rates.values()))
    metrics["hold_loops"] = sorted(loop.describe() for loop in net.loops.values())
    results.record_held_frames(run_dir, net.hold)
    if net.cluster is not None:
        metrics["cluster"] = net.cluster
    return net, program


def _on_the_fabric(run_plan: RunPlan, net: EmulatedNetwork, program, run_dir: Path,
                   ledger: Ledger, status: StatusLine, view_options: ViewOptions | None = None
                   ) -> dict:
    """Stages bring-up, traffic, readout and metrics, on a running fabric."""
    # Imported here: the controller and traffic talk to switches over the network;
    # nothing above needs them to plan or build a fabric.
    from controller.bringup import bring_up
    from controller.readout import counters_json, read_all
    from fabriclab.agents import start_agents
    from fabriclab.measure import measure, unknown_dlid_check
    from fabriclab.traffic_run import run_traffic, send_to_unknown_dlid
    from fabriclab.view import start_view, stop_view

    scenario, fabric = run_plan.scenario, run_plan.fabric
    status.set_phase("subnet manager: pipeline, cabling, LIDs, routes, flow control")
    bringup = bring_up(fabric, net.grpc_addrs, program.p4info, program.bmv2_json,
                       host_macs(fabric),
                       replace(bringup_options(run_plan), hold_loops=net.hold.switches,
                               priority_queues=PRIORITY_QUEUES,
                               pace_links=net.links_shaped_after_pipeline),
                       run_dir)
    sm, agents = bringup.sm, None
    view_problems: list[str] = []
    view = start_view(sm, run_dir, view_options, status, view_problems)
    try:
        # The hosts learn their addresses from the SM's Subnet Administrator (their
        # NICs query it at start) and, after a global reroute, changed paths from its
        # REPORTs.
        sm.serve_sa(run_dir / "sa_log.jsonl")
        if any(f.kind in LINK_FAULTS for f in run_plan.faults):
            sm.start_event_loop(run_dir / "sm_timeline.jsonl")
            status.set_phase(f"starting {len(fabric.switches)} local agents")
            agents = start_agents(fabric, net.grpc_addrs, program.p4info, sm, run_dir, ledger,
                                  net=net)
        traffic = run_traffic(run_plan, net, bringup, run_dir, ledger, status)
        status.set_phase("reading the switches and analysing")
        readout = read_all(sm, fabric)
        for name, ports in net.shaping_drops().items():  # tc after the pipeline (bmv2)
            for port, n in ports.items():
                readout.drops.setdefault(name, {})[(port, LINK_SHAPING_DROP)] = (n, 0)
        results.write_json(run_dir / "counters.json", counters_json(readout.drops, run_dir.name))
        results.write_json(run_dir / "telemetry.json", readout.telemetry)
        metrics = measure(run_plan, bringup, traffic, readout, run_dir)
        frames = scenario.checks.unknown_dlid_frames
        if frames:
            # A separate window after the data counters were read, so the data's loss
            # accounting and this check do not mix.
            status.set_phase("check: frames to an unknown DLID")
            send_to_unknown_dlid(run_plan, net, bringup, run_dir, ledger, frames)
            after = read_all(sm, fabric)
            metrics["checks"] = {"unknown_dlid": unknown_dlid_check(run_plan, readout, after,
                                                                    frames)}
        stop_view(view, view_problems)
        view = None
        if view_problems:
            metrics.setdefault("problems", []).extend(view_problems)
        return metrics
    finally:
        stop_view(view, [])
        if agents is not None:
            agents.stop()
        sm.stop_event_loop()
        sm.close()


def bringup_options(run_plan: RunPlan):
    from controller.bringup import BringupOptions, fc_params
    from fabriclab.traffic_run import frame_bytes

    scenario, qos = run_plan.scenario, run_plan.qos
    pfc, credit = scenario.pfc, scenario.credit
    params = fc_params(scenario.flow_control, xoff=pfc.xoff, xon=pfc.xon,
                       headroom=pfc.headroom, credit_limit=credit.buffer_pkts,
                       credit_coalesce=credit.coalesce, hoq_lifetime_us=credit.hoq_lifetime_us,
                       watchdog_detect_us=pfc.watchdog_detect_us,
                       watchdog_restore_us=pfc.watchdog_restore_us)
    return BringupOptions(routing=scenario.routing,
                          fast_reroute=scenario.reroute in ("fast", "local"),
                          notification=scenario.reroute == "fast",
                          vl_layering=scenario.vl_layering, flow_control=scenario.flow_control,
                          fc_params=params, frame_bytes=frame_bytes(scenario),
                          convergence_delay_s=scenario.convergence_delay_s,
                          qos_policy=qos.policy if qos else None,
                          partitions=qos.partitions if qos else None,
                          class_queues=bool(qos and qos.class_queues))


def _victims(run_plan: RunPlan, run_dir: Path, metrics: dict, baseline: RunResult) -> dict:
    """Victim goodput while a stall or pause storm lasts, against the baseline run."""
    from traffic.metrics import VictimGoodput
    from traffic.victims import victims_during

    faulted = {f.node for f in run_plan.faults if f.kind in VICTIM_FAULTS}
    base_start = baseline.metrics.traffic_start_ns
    out: dict = {"baseline_run": str(baseline.run_dir), "victim_goodput_ratio": None}
    if not faulted or metrics.get("traffic_start_ns") is None or base_start is None:
        out["victim_goodput"] = VictimGoodput(
            error="no stall or pause storm, or a run without traffic")
        return out
    begin = min(f.at_s for f in run_plan.faults if f.kind in VICTIM_FAULTS)
    ends = [f.at_s for f in run_plan.faults if f.kind == "unstall" and f.at_s > begin]
    result = victims_during(run_dir, metrics["traffic_start_ns"], baseline.run_dir,
                            base_start, faulted, begin,
                            min(ends) if ends else run_plan.scenario.duration_s)
    out.update(victim_goodput=result, victim_goodput_ratio=result.ratio)
    return out


def _crashes(net: EmulatedNetwork | None, metrics: dict) -> None:
    crashed = net.crashed_switches() if net is not None else {}
    if crashed:
        metrics["crashed_switches"] = crashed
        what = "switch process(es) died during the run: " + ", ".join(
            f"{name} (exit {code})" for name, code in sorted(crashed.items()))
        metrics.setdefault("problems", []).append(what)
        if metrics.get("error"):
            metrics["error"] += f"; {what}"
    relays = net.crashed_relays() if net is not None else {}
    if relays:  # the frames it held are gone, and the switch's held frames with them
        metrics.setdefault("problems", []).append(
            "hold relay(s) died during the run, with the frames they held: " + ", ".join(
                f"{name} (exit {code}, logs/{name}.hold-relay.log)"
                for name, code in sorted(relays.items())))


def _finish(run_plan: RunPlan, metrics: dict, run_dir: Path) -> RunMetrics:
    """Stage: the typed metrics with their verdict, metrics.json, the report."""
    try:
        typed = RunMetrics.from_json({**metrics, "schema": SCHEMA}, "the run's metrics")
    except MetricsSchemaError as exc:  # a stage wrote a figure the schema does not declare
        typed = RunMetrics(scenario=metrics["scenario"], target=metrics["target"],
                           flow_control=metrics["flow_control"], error=str(exc))
    s = run_plan.scenario
    verdict = decide(typed, lossless_expected=s.traffic.rate_pps < s.link.rate_pps)
    typed = replace(typed, verdict=verdict.verdict, verdict_reasons=verdict.reasons)
    typed.write(run_dir / "metrics.json")
    results.write_report(run_dir)
    return typed
