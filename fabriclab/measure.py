"""The metrics stage of a run: the traffic's logs and captures, the switches' readout and
the SM's record, turned into the run's figures (traffic/metrics.py's fields).

Each figure is computed by its owner in traffic/ (analysis, recovery, stall,
reconcile); this module only hands each one its inputs.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from pathlib import Path

from controller.bringup import Bringup
from controller.readout import Readout
from fabriclab.plan import RunPlan
from fabriclab.qos_measure import measure_qos
from fabriclab.traffic_run import UNKNOWN_DLID, TrafficRun
from topologies import cpu_wait, link_names
from traffic import recovery, stall, training
from traffic.analysis import ReceiverTrace, analyze
from traffic.metrics import CollectiveTime, FaultRecord, LinkFailure, UnknownDlidCheck
from traffic.reconcile import reconcile
from traffic.timing import bandwidth, collective_times


def _event_ns(traffic: TrafficRun, kind: str, at_s: float) -> int | None:
    """When the fault of `kind` planned at `at_s` started (None: it never ran)."""
    return next((e.started_ns for e in traffic.events if e.name.startswith(kind)
                 and e.at_s == at_s and e.started_ns), None)


def link_failures(plan: RunPlan, traffic: TrafficRun, timeline: list[dict]
                  ) -> list[LinkFailure]:
    """Each link_down fault that ran: when it went down and when the data plane stopped
    using it (the later of its two ends' local switchover, or global reroute where there
    was none). A host has one port and no switchover: it sends into its failed link until
    the link is back up (None: not in this run)."""
    out = []
    for fault in plan.faults:
        if fault.kind != "link_down":
            continue
        down_ns = _event_ns(traffic, "link_down", fault.at_s)
        if down_ns is None:
            continue  # cancelled before its time
        if not all(link_names.is_switch(plan.fabric, n) for n in (fault.link.a, fault.link.b)):
            ups = [ns for f in plan.faults if f.kind == "link_up" and f.link == fault.link
                   and f.at_s > fault.at_s
                   and (ns := _event_ns(traffic, "link_up", f.at_s)) is not None]
            out.append(LinkFailure(fault.label, down_ns, min(ups) if ups else None))
            continue
        ports = link_names.port_pair(fault.link)  # the SM's timeline spells a link so
        restored = [r.get("switchover_ns") or r.get("install_done_ns") for r in timeline
                    if r.get("event") == "port_down" and r.get("link") == ports
                    and r.get("detected_ns", 0) >= down_ns - 1e9]
        out.append(LinkFailure(fault.label, down_ns,
                               max(restored) if restored and all(restored) else None))
    return out


def _collectives(traffic: TrafficRun, message_bytes: int) -> dict:
    out: dict = {"cct_ms": None, "algbw": None, "busbw": None}
    if traffic.spec is None:
        return out
    ids = {str(traffic.spec.coll_id + i) for i in range(traffic.spec.reps)}
    cct = {cid: c for cid, c in collective_times(traffic.summaries.values()).items()
           if cid in ids}  # background traffic (fabriclab/qos_traffic.py) is no collective
    out["collectives"] = {cid: CollectiveTime(**c) for cid, c in cct.items()}
    times = [c["cct_ms"] for c in cct.values()]
    if times and all(x is not None for x in times):
        out["cct_ms"] = max(times)
        out.update(bandwidth(message_bytes, out["cct_ms"], traffic.spec.algorithm,
                             traffic.spec.n))
    return out


def measure(plan: RunPlan, bringup: Bringup, traffic: TrafficRun, readout: Readout,
            run_dir: Path) -> dict:
    """The run's figures, as RunMetrics field values."""
    sm, fabric = bringup.sm, plan.fabric
    flows = recovery.flows_of(traffic.flow_files.values(), bringup.lids)
    paths = recovery.flow_paths(fabric, bringup.routes, flows, bringup.lids)
    failures = link_failures(plan, traffic, list(sm.timeline))
    traces = [ReceiverTrace(traffic.pcaps[h], dlid=bringup.lids[h]) for h in traffic.ranks]
    m = analyze(traffic.sent_logs, traces, traffic.capture_stats, switch_drops=readout.drops,
                run_id=run_dir.name, failures=[dataclasses.asdict(f) for f in failures] or None,
                flow_paths=paths if failures else None)
    problems = m["problems"]
    if readout.unreadable:
        m["partial"] = True
        problems += [f"counters of {n} could not be read: {why}"
                     for n, why in readout.unreadable.items()]
    held = stall.held_at_end(readout.telemetry)
    window_ns = int((traffic.end_at - traffic.start_at) * 1e9)
    m.update(
        traffic_start_ns=int(traffic.start_at * 1e9), nics=traffic.summaries,
        link_failures=tuple(failures), held_at_end=held,
        held_in_fabric=sum(h.buffered for h in held), stalled_after_s=traffic.stalled_after_s,
        paused_ports=stall.paused_ports(readout.telemetry, window_ns),
        blocked_hosts=stall.blocked_hosts(traffic.summaries),
        faults=tuple(FaultRecord(e.name, e.at_s, e.started_ns, e.error)
                     for e in traffic.events),
        rate_kept=m.get("rate_kept", True) and all(
            s.get("rate_kept", False) for s in traffic.summaries.values())
        and not cpu_wait.mark_starved(traffic.switch_cpu, plan.scenario.link.rate_pps),
        switch_cpu=traffic.switch_cpu,
        sm_setup_s=bringup.seconds, topology=fabric.name, routing=plan.scenario.routing,
        reroute=plan.scenario.reroute, sm_timeline=tuple(sm.timeline),
        deadlock_free_routing=not sm.deadlock_problem,
        deadlock_problem=sm.deadlock_problem or None, vls_used=bringup.vls_used,
        discovered_links=bringup.discovered_links,
        **_collectives(traffic, plan.scenario.traffic.message_bytes))
    if failures and plan.scenario.training.iterations:  # every flap, for the job's report
        m["failure_gaps"] = tuple(training.failure_gaps(
            traffic.sent_logs, traffic.recv_logs, [(f.link, f.down_ns) for f in failures],
            paths))
    if failures:
        first = failures[0]
        fault = next(f for f in plan.faults if f.kind == "link_down")
        ports = link_names.port_pair(fault.link)
        figures = recovery.recovery(
            first.link, first.down_ns, paths, flows, bringup.backups, traffic.recv_logs,
            cut_ns=recovery.link_seen_down_ns(ports, first.down_ns, sm.timeline))
        problems += figures.pop("problems", [])
        m.update(figures)
        m.update(recovery.agent_timeline(ports, first.down_ns, sm.timeline))
    m.update(measure_qos(plan, bringup, traffic, readout, m))
    rec = reconcile(m, traffic.summaries, failures=bool(failures),
                    held_in_fabric=m["held_in_fabric"])
    m["reconciliation"] = rec
    problems += faults_after_traffic(plan, traffic)
    failed = failed_nics(traffic.summaries)
    if failed:
        m["error"] = failed
    if rec is not None:  # the reconciled figure replaces the analysis's data-only one
        m["unexplained_loss"], m["suspect"] = rec.unexplained, rec.unexplained > 0
        m["problems"] = [p for p in problems if not p.startswith("suspect:")]
    return m


def faults_after_traffic(plan: RunPlan, traffic: TrafficRun) -> list[str]:
    """Planned faults that came too late to be measured: not injected because the traffic
    stage was over, or injected after every NIC was done (nothing was moving)."""
    done = [s.get("done_ns") for s in traffic.summaries.values()]
    done_s = max(done) / 1e9 - traffic.start_at if done and all(done) else None
    over = "" if done_s is None else f" after {done_s:.2f} s"
    ran = Counter(e.at_s for e in traffic.events)  # an event is named by its action
    out = []
    for f in plan.faults:
        what = f"fault {f.kind} {f.label} planned at {f.at_s:g} s"
        if not ran[f.at_s]:
            out.append(f"{what} did not run: the traffic was over{over}")
            continue
        ran[f.at_s] -= 1
        if done_s is not None and f.at_s > done_s:
            out.append(f"{what} came after the traffic was over{over}: nothing measured it")
    return out


def failed_nics(summaries: dict[str, dict]) -> str | None:
    """NICs that died during the traffic (no summary written, fabriclab/hosts.py): the run's
    traffic is not what the scenario asked for, whatever the other figures say."""
    failed = {name: s.get("problem", "no summary") for name, s in summaries.items()
              if s.get("missing")}
    if not failed:
        return None
    return "NIC(s) failed during the traffic: " + "; ".join(
        f"{name}: {why}" for name, why in sorted(failed.items()))


def unknown_dlid_check(plan: RunPlan, before: Readout, after: Readout, sent: int
                       ) -> UnknownDlidCheck:
    """The frames the first rank sent to UNKNOWN_DLID, each dropped and counted (no_route)
    by its switch: the counter's growth between two readouts."""
    switch, port = plan.fabric.host_switch(plan.ranks[0])
    key = (port, "no_route")

    def count(r: Readout) -> int:
        return r.drops.get(switch, {}).get(key, (0, 0))[0]

    dropped = count(after) - count(before)
    return UnknownDlidCheck(UNKNOWN_DLID, sent, dropped, switch, port, dropped == sent)
