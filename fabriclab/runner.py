"""Runs one scenario end to end and leaves a complete result directory.

build topology -> start switches -> SM pushes the pipeline, assigns LIDs,
installs routes -> capture on the receiver -> traffic -> checks -> counters ->
analysis -> metrics.json + report.md -> teardown of exactly what was created.

A run that fails still writes what it has, with `verdict: "error"` and why.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import fabriclab
from fabriclab.scenario import FlowControl, Scenario
from fabriclab.status import StatusLine
from topologies import capacity
from topologies.description import Fabric, LinkParams
from topologies.generators import build as build_fabric
from topologies.ledger import Ledger, cleanup_stale
from topologies.network import EmulatedNetwork, host_mac, start_network
from topologies.targets import Target, compile_program

ROOT = Path(__file__).resolve().parent.parent
FABRIC_P4 = ROOT / "p4src" / "fabric.p4"
UNKNOWN_DLID = 0xBEEF  # inside the unicast range, never assigned by the SM in small fabrics
CHECK_FLOW_ID = 0xFFFF  # flow id of the frames sent to UNKNOWN_DLID
TM_DEPTH = 4096  # packets per switch port queue: above any buffer fabric.p4 admits
IMPLEMENTED_FLOW_CONTROL = (FlowControl.LOSSY, FlowControl.PFC, FlowControl.CREDIT)


@dataclass
class RunResult:
    run_dir: Path
    metrics: dict

    @property
    def ok(self) -> bool:
        return self.metrics.get("verdict") == "pass"


def _write_json(path: Path, data) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True, default=str) + "\n")
    os.replace(tmp, path)


def _versions(target: Target) -> dict:
    def first_line(cmd: list[str]) -> str | None:
        try:
            out = subprocess.run(cmd, capture_output=True, text=True, timeout=10, check=False)
        except (OSError, subprocess.TimeoutExpired):
            return None
        return (out.stdout or out.stderr).strip().splitlines()[0] if (out.stdout or out.stderr) else None

    versions = {"fabriclab": fabriclab.__version__, "python": platform.python_version(),
                "kernel": platform.release(),
                "tcpdump": first_line(["tcpdump", "--version"])}
    git = first_line(["git", "-C", str(ROOT), "rev-parse", "HEAD"])
    versions["git_commit"] = git
    versions.update(target.versions())  # compiler, switch, why, their versions, link rates
    return versions


def fabric_for(scenario: Scenario) -> Fabric:
    link = scenario.link
    return build_fabric(scenario.topology, LinkParams(link.rate_pps, link.delay_us,
                                                      link.buffer_pkts))


def _port_params(fabric: Fabric) -> dict[str, dict[int, str]]:
    """Per switch and port, the link properties the switch's port scheduler enforces."""
    out: dict[str, dict[int, str]] = {}
    for sw in fabric.switches:
        ports = {}
        for link in fabric.links_of(sw.name):
            port, _peer, _peer_port = link.endpoint(sw.name)
            p = link.params
            # fabric.p4 manages the buffer in every mode (egress_limit in LOSSY,
            # per ingress port and class in PFC/CREDIT, drops counted); the
            # traffic manager's own queue must never be what drops.
            ports[port] = f"rate_pps={p.rate_pps},delay_us={p.delay_us},depth={TM_DEPTH}"
        out[sw.name] = ports
    return out


def run(scenario: Scenario, target: Target, results_root: Path,
        status: StatusLine | None = None, program_source: Path = FABRIC_P4) -> RunResult:
    status = status or StatusLine()
    run_id = time.strftime("%Y%m%d-%H%M%S") + f"-{scenario.name}"
    run_dir = Path(results_root) / run_id
    suffix = 1
    while run_dir.exists():
        suffix += 1
        run_dir = Path(results_root) / f"{run_id}-{suffix}"
    run_dir.mkdir(parents=True)
    _write_json(run_dir / "scenario.json", scenario.as_dict())
    _write_json(run_dir / "versions.json", _versions(target))
    metrics: dict = {"scenario": scenario.name, "target": target.value,
                     "flow_control": scenario.flow_control.value, "verdict": "error"}
    for line in cleanup_stale():
        print(f"cleaned up after an interrupted run: {line}", file=sys.stderr)
    baseline = None
    if scenario.baseline and scenario.faults:
        # The same run without its faults, first (one emulation at a time): what the
        # victims' goodput is measured against.
        status.set_phase("baseline: the same run without faults")
        baseline = run(replace(scenario, faults=(), baseline=False), target,
                       run_dir / "baseline", status, program_source)
    ledger = Ledger.create(run_dir.name)
    net: EmulatedNetwork | None = None
    try:
        status.set_phase("building topology")
        fabric = fabric_for(scenario)
        _write_json(run_dir / "topology.json", asdict(fabric))
        fit = capacity.check(fabric)
        metrics["capacity"] = fit.as_dict()
        for warning in fit.warnings:
            print(f"fabriclab: warning: {warning}", file=sys.stderr)
        if not fit.fits:
            raise capacity.CapacityError(fit.warnings[0])
        status.set_phase(f"compiling {program_source.name} ({target.value})")
        program = compile_program(target, program_source, ROOT / "build" / "p4")
        status.set_phase(f"starting {len(fabric.switches)} switches and {len(fabric.hosts)} hosts")
        net = start_network(fabric, target, ledger, run_dir / "logs", _port_params(fabric))
        metrics["link_rate_enforcement"] = sorted(set(net.link_rates.values()))
        metrics.update(_experiment(scenario, fabric, net, program, run_dir, ledger, status))
        if baseline is not None:
            metrics.update(_victim_goodput(scenario, run_dir, metrics, baseline))
        crashed = net.crashed_switches()
        if crashed:
            metrics["crashed_switches"] = crashed
            metrics.setdefault("problems", []).append(
                "switch process(es) died during the run: " + ", ".join(
                    f"{name} (exit {code})" for name, code in sorted(crashed.items())))
    except Exception as exc:  # noqa: BLE001 - a failed run still writes what it has
        metrics["error"] = f"{type(exc).__name__}: {exc}"
        if net is not None:
            crashed = net.crashed_switches()
            if crashed:
                metrics["error"] += "; crashed switches: " + ", ".join(
                    f"{name} (exit {code})" for name, code in crashed.items())
    finally:
        status.set_phase("tearing down")
        leftovers = net.stop() if net is not None else ledger.teardown()
        if leftovers:
            metrics.setdefault("problems", []).append("teardown left: " + ", ".join(leftovers))
        _write_json(run_dir / "metrics.json", metrics)
        _write_report(run_dir, scenario, metrics)
    return RunResult(run_dir, metrics)


def _experiment(scenario: Scenario, fabric: Fabric, net: EmulatedNetwork, program,
                run_dir: Path, ledger: Ledger, status: StatusLine) -> dict:
    # Imported here: the controller and traffic talk to switches over the
    # network; nothing above needs them to build a fabric.
    from controller.sm import SubnetManager, connect_switches
    from traffic.analysis import ReceiverTrace, analyze
    from traffic.capture import Capture

    status.set_phase("subnet manager: pipeline, LIDs, routes")
    macs = {h.name: host_mac(int(h.name[1:])) for h in fabric.hosts}
    from controller.routing import engine as routing_engine

    t0 = time.monotonic()
    sm = SubnetManager(fabric, connect_switches(fabric, net.grpc_addrs), host_macs=macs,
                       engine=routing_engine(scenario.routing),
                       fast_reroute=scenario.reroute == "fast",
                       vl_layering=scenario.vl_layering)
    agents = None
    try:
        sm.push_pipeline(program.p4info, program.bmv2_json)
        sm.assign_lids(run_dir / "guid2lid.json")
        sm.install_routes()
        sm.install_sl_to_vl()
        sm.write_address_book(run_dir / "address_book.json")
        _configure_flow_control(scenario, fabric, sm)
        sm_seconds = time.monotonic() - t0
        if any(f.kind in ("link_down", "link_up") for f in scenario.faults):
            sm.start_event_loop(run_dir / "sm_timeline.jsonl")
            # Hosts learn changed paths in-band: a global reroute that changes a
            # destination's SL sends them an SA REPORT (their NICs apply it).
            sm.serve_sa(run_dir / "sa_log.jsonl")
            status.set_phase(f"starting {len(fabric.switches)} local agents")
            agents = _start_agents(fabric, net, sm, program, run_dir, ledger)
        if scenario.traffic.pattern != "stream" or scenario.flow_control is not FlowControl.LOSSY:
            result = _nic_experiment(scenario, fabric, net, sm, run_dir, ledger, status)
            result.update({"sm_setup_s": round(sm_seconds, 3), "topology": fabric.name,
                           "routing": scenario.routing, "reroute": scenario.reroute,
                           "sm_timeline": list(sm.timeline),
                           "deadlock_free_routing": not sm.deadlock_problem,
                           "deadlock_problem": sm.deadlock_problem or None,
                           "vls_used": len(set(sm.vl_of.values())) or 1})
            result["verdict"] = _verdict(scenario, result)
            return result

        traffic = scenario.traffic
        src, dst = net.host(traffic.src), net.host(traffic.dst)
        lids = sm.lids
        pcap = run_dir / "pcaps" / f"{traffic.dst}.pcap"
        capture = Capture(f"{traffic.dst}-eth0", pcap, spawn=dst.popen, direction="in")
        capture.start()
        ledger.add_process(capture.pid, f"tcpdump on {traffic.dst}")
        try:
            status.set_phase(f"traffic: {traffic.frames} frames {traffic.src} -> {traffic.dst}")
            data_log = run_dir / "senders" / f"{traffic.src}-flow1.csv"
            sender = _send(src, ledger, data_log, macs[traffic.src], macs[traffic.dst],
                           lids[traffic.src], lids[traffic.dst], flow=1, count=traffic.frames,
                           rate=traffic.rate_pps, payload=traffic.payload_bytes,
                           timeout=scenario.duration_s)
            _drain(scenario, fabric)
        finally:
            stats = capture.stop()
        status.set_phase("reading counters and analysing")
        counters, unreadable = _split_unreadable(_read_counters(sm, fabric))
        _write_json(run_dir / "counters.json", _counters_json(counters))
        result = analyze([data_log], [ReceiverTrace(pcap, dlid=lids[traffic.dst])], [stats],
                         switch_drops=counters)
        if unreadable:
            result["partial"] = True
            result.setdefault("problems", []).extend(
                f"counters of {n} could not be read: {why}" for n, why in unreadable.items())
        checks = {}
        if scenario.checks.unknown_dlid_frames:
            # A separate window after the data counters were read, so the data's
            # loss accounting and this check do not mix.
            status.set_phase("check: frames to an unknown DLID")
            check_log = run_dir / "senders" / f"{traffic.src}-unknown-dlid.csv"
            _send(src, ledger, check_log, macs[traffic.src], macs[traffic.dst],
                  lids[traffic.src], UNKNOWN_DLID, flow=CHECK_FLOW_ID,
                  count=scenario.checks.unknown_dlid_frames, rate=traffic.rate_pps,
                  payload=traffic.payload_bytes, timeout=10)
            _drain(scenario, fabric)
            after, _unreadable = _split_unreadable(_read_counters(sm, fabric))
            src_switch, src_port = fabric.host_switch(traffic.src)
            key = (src_port, "no_route")
            dropped = after[src_switch].get(key, (0, 0))[0] - counters[src_switch].get(
                key, (0, 0))[0]
            checks["unknown_dlid"] = {"dlid": UNKNOWN_DLID,
                                      "sent": scenario.checks.unknown_dlid_frames,
                                      "dropped_no_route": dropped, "switch": src_switch,
                                      "port": src_port,
                                      "ok": dropped == scenario.checks.unknown_dlid_frames}
        result.update({"checks": checks, "sender": sender, "sm_setup_s": round(sm_seconds, 3),
                       "topology": fabric.name})
        result["verdict"] = _verdict(scenario, result)
        return result
    finally:
        if agents is not None:
            agents.stop()
        sm.stop_event_loop()
        sm.close()


def _start_agents(fabric: Fabric, net: EmulatedNetwork, sm, program, run_dir: Path,
                  ledger: Ledger):
    """A local agent process per switch (carrier loss -> port_down at once -> the SM told
    over its report socket), in the ledger by PID; returns once all said ready."""
    from fabriclab.agents import start_agents

    return start_agents(fabric, net.grpc_addrs, program.p4info, sm, run_dir, ledger)


PATTERN_ALGORITHM = {"allreduce-ring": "ring_allreduce", "allreduce-hd": "hd_allreduce",
                     "alltoall": "alltoall", "incast": "incast", "permutation": "permutation"}


def _frame_bytes(scenario: Scenario) -> int:
    from traffic.frames import DATA_HEADER_LEN

    return DATA_HEADER_LEN + scenario.traffic.payload_bytes


def _configure_flow_control(scenario: Scenario, fabric: Fabric, sm) -> None:
    """Put every switch in the scenario's flow-control mode with its parameters."""
    from controller import flow_control as fc
    from traffic.nic import pause_quantum_ns

    mode = {FlowControl.LOSSY: fc.Mode.LOSSY, FlowControl.PFC: fc.Mode.PFC,
            FlowControl.CREDIT: fc.Mode.CREDIT}[scenario.flow_control]
    pfc, credit = scenario.pfc, scenario.credit
    params = fc.FlowControlParams(
        mode=mode, xoff=pfc.xoff, xon=pfc.xon, headroom=pfc.headroom,
        credit_limit=credit.buffer_pkts, credit_coalesce=credit.coalesce,
        # HoQ lifetime is InfiniBand's (CREDIT); the PFC watchdog is Ethernet's answer
        hoq_lifetime_us=credit.hoq_lifetime_us if mode is fc.Mode.CREDIT else 0,
        watchdog_detect_us=pfc.watchdog_detect_us,
        watchdog_restore_us=pfc.watchdog_restore_us)
    frame_bytes = _frame_bytes(scenario)

    def one(name: str) -> None:
        quanta, limits = {}, {}
        for link in fabric.links_of(name):
            port, _peer, _peer_port = link.endpoint(name)
            quanta[port] = round(pause_quantum_ns(link.params.rate_pps, frame_bytes))
            limits[port] = link.params.buffer_pkts
        fc.configure(sm.connections[name], params, quanta, limits)

    names = [sw.name for sw in fabric.switches]
    with ThreadPoolExecutor(max_workers=min(16, len(names))) as pool:
        list(pool.map(one, names))


def _ranks(scenario: Scenario, fabric: Fabric) -> list[str]:
    hosts = list(scenario.traffic.hosts) or sorted((h.name for h in fabric.hosts),
                                                   key=lambda n: int(n[1:]))
    unknown = [h for h in hosts if h not in {n.name for n in fabric.hosts}]
    if unknown:
        raise ValueError(f"[traffic] hosts {unknown} are not in {fabric.name}")
    return hosts


def _stream_flow_files(scenario: Scenario, lids: dict[str, int], macs: dict[str, str],
                       out_dir: Path) -> dict[str, Path]:
    """FLOWS.json for a plain stream: one flow src -> dst, the receiver expects it."""
    t = scenario.traffic
    out_dir.mkdir(parents=True, exist_ok=True)
    files = {
        t.src: {"name": t.src, "lid": lids[t.src], "mac": macs[t.src],
                "flows": [{"flow": 1, "dst_mac": macs[t.dst], "dlid": lids[t.dst],
                           "count": t.frames, "payload": t.payload_bytes}], "recvs": []},
        t.dst: {"name": t.dst, "lid": lids[t.dst], "mac": macs[t.dst], "flows": [],
                "recvs": [{"coll_id": 0, "step": 0, "slid": lids[t.src],
                           "frames": t.frames}]},
    }
    paths = {}
    for name, content in files.items():
        paths[name] = out_dir / f"{name}.flows.json"
        paths[name].write_text(json.dumps(content, indent=1) + "\n")
    return paths


def _nic_experiment(scenario: Scenario, fabric: Fabric, net: EmulatedNetwork, sm,
                    run_dir: Path, ledger: Ledger, status: StatusLine) -> dict:
    """Traffic through the hosts' NIC emulators, which speak the link's flow control."""
    from fabriclab.hosts import NicFleet, NicSettings
    from traffic.analysis import (
        ReceiverTrace,
        analyze,
        arrivals_from_recv_logs,
        bandwidth,
        collective_times,
        recovery_gaps,
    )
    from traffic.capture import Capture
    from traffic.collectives import CollectiveSpec, address_book, write_flow_files

    t = scenario.traffic
    lids = sm.lids
    macs = {h.name: host_mac(int(h.name[1:])) for h in fabric.hosts}
    flows_dir = run_dir / "flows"
    if t.pattern == "stream":
        ranks = [t.src, t.dst]
        flow_files = _stream_flow_files(scenario, lids, macs, flows_dir)
        spec = None
    else:
        ranks = _ranks(scenario, fabric)
        root = ranks.index(t.dst) if t.dst in ranks else 0
        spec = CollectiveSpec(algorithm=PATTERN_ALGORITHM[t.pattern], n=len(ranks),
                              message_bytes=t.message_bytes, payload=t.payload_bytes,
                              reps=t.repetitions, root=root)
        book = address_book({h: (lids[h], macs[h], sm.vl_of.get(lids[h], 0)) for h in ranks})
        flow_files = write_flow_files(spec, book, flows_dir)
    hosts = {h: net.host(h) for h in ranks}
    settings = NicSettings(mode=scenario.flow_control.value, rate_pps=scenario.link.rate_pps,
                           frame_bytes=_frame_bytes(scenario),
                           buffer=scenario.credit.buffer_pkts if scenario.flow_control is
                           FlowControl.CREDIT else scenario.link.buffer_pkts,
                           xoff=scenario.pfc.xoff, xon=scenario.pfc.xon,
                           credit_coalesce=scenario.credit.coalesce,
                           transport=t.transport)
    flows = _flows(flow_files.values())
    flow_paths = _flow_paths(fabric, sm.routes, flows, lids)
    backups = {sw: dict(table) for sw, table in sm.backups.items()}  # as installed at start
    captures = {}
    for h in ranks:
        cap = Capture(f"{h}-eth0", run_dir / "pcaps" / f"{h}.pcap", spawn=hosts[h].popen,
                      direction="in")
        cap.start()
        ledger.add_process(cap.pid, f"tcpdump on {h}")
        captures[h] = cap
    fleet = NicFleet(run_dir / "nics", ledger)
    stats = []
    try:
        status.set_phase(f"traffic: {t.pattern} over {len(ranks)} hosts "
                         f"({scenario.flow_control.value})")
        start_at = fleet.start(hosts, flow_files, lids, macs, settings, scenario.duration_s)
        schedule = _fault_schedule(scenario, fabric, net, fleet)
        if schedule is not None:
            schedule.start(int(start_at * 1e9))
        def show(counts: dict[str, int]) -> None:
            for key, value in counts.items():
                status.set_count(key, value)

        summaries = fleet.wait(scenario.duration_s + 15, on_progress=show,
                               stall_s=scenario.stall_timeout_s, start_at=start_at)
        if schedule is not None:
            schedule.cancel()
            events = schedule.join(5)
        else:
            events = []
        _drain(scenario, fabric)
    finally:
        fleet.stop()
        for cap in captures.values():
            stats.append(cap.stop())
    status.set_phase("reading counters and analysing")
    counters, unreadable = _split_unreadable(_read_counters(sm, fabric))
    _write_json(run_dir / "counters.json", _counters_json(counters, run_dir.name))
    telemetry = _read_telemetry(sm, fabric)
    _write_json(run_dir / "telemetry.json", telemetry)
    held = _held_at_end(telemetry)
    traces = [ReceiverTrace(run_dir / "pcaps" / f"{h}.pcap", dlid=lids[h]) for h in ranks]
    failures = _link_failures(scenario, events, sm.timeline)
    result = analyze(fleet.sent_logs(), traces, stats, switch_drops=counters,
                     run_id=run_dir.name, failures=failures or None,
                     flow_paths=flow_paths if failures else None)
    result["traffic_start_ns"] = int(start_at * 1e9)
    if failures:
        result["link_failures"] = failures
    if unreadable:
        result["partial"] = True
        result.setdefault("problems", []).extend(
            f"counters of {name} could not be read: {why}" for name, why in unreadable.items())
    result["nics"] = summaries
    # After the drain every switch buffer should be empty: what is left was never let go
    # (a deadlock, a stall nobody bounded, or a bug), per (switch, port, class).
    result["held_at_end"] = held
    result["held_in_fabric"] = sum(h["buffered"] for h in held)
    result["stalled_after_s"] = fleet.stalled_after_s
    window_ns = int((time.time() - start_at) * 1e9)
    result["paused_ports"] = _paused_ports(telemetry, window_ns)
    result["faults"] = [_event_json(e) for e in events]
    result["cct_ms"] = result["algbw"] = result["busbw"] = None
    if spec is not None:
        cct = collective_times(summaries.values())
        result["collectives"] = cct
        times = [c.get("cct_ms") for c in cct.values()]
        if times and all(x is not None for x in times):
            result["cct_ms"] = max(times)
            result.update(bandwidth(t.message_bytes, result["cct_ms"], spec.algorithm,
                                    spec.n))
    result["recovery_gap_ms"] = None
    if failures:
        # recovery_gap_ms: frames reaching the receivers' ports (copies the RC transport
        # then discarded too), the data plane's gap; delivery_gap_ms: in-order delivery,
        # which with RC also waits for the lost frames' retransmission. Flows that cross
        # the failed link only.
        first = failures[0]
        crossing = {flow for flow, links in flow_paths.items()
                    if any(set(link.split("-")) == set(first["link"].split("-"))
                           for link in links)}
        # Protected: the switch that sends into the failed link has a backup port for the
        # flow's destination, so the data plane moves the flow at once. The other
        # direction waits for the SM's global reroute (on a fat tree an aggregation
        # switch that lost its down-link has no other way down).
        protected = _protected_flows(first["link"], flow_paths, flows, backups) & crossing
        result["protected_flows"] = sorted(protected)
        for key, delivered_only in (("recovery", False), ("delivery", True)):
            arrivals = arrivals_from_recv_logs(fleet.recv_logs(), delivered_only)
            gaps = recovery_gaps({f: ts for f, ts in arrivals.items() if f in crossing},
                                 first["down_ns"])
            for flow, gap in gaps.items():
                gap["protected"] = int(flow) in protected
            result[key] = gaps
            values = [g["gap_ms"] for g in gaps.values() if g.get("gap_ms") is not None]
            result[f"{key}_gap_ms"] = max(values) if values else None
            values = [g["gap_ms"] for g in gaps.values()
                      if g.get("gap_ms") is not None and g["protected"]]
            result[f"{key}_gap_protected_ms"] = max(values) if values else None
        if not crossing:
            result.setdefault("problems", []).append(
                f"no flow crosses the failed link {first['link']}: no recovery gap")
    result["rate_kept"] = result.get("rate_kept", True) and all(
        s.get("rate_kept", False) for s in summaries.values())
    return result


def _event_json(event) -> dict:
    return {k: getattr(event, k) for k in ("name", "at_s", "started_ns", "error")
            if hasattr(event, k)}


def _link_ends(fabric: Fabric, target: str, net: EmulatedNetwork):
    from traffic.faults import LinkEnd

    a, _, b = target.partition("-")
    for link in fabric.links:
        if {link.a, link.b} == {a, b}:
            ends = []
            for node, port in ((link.a, link.a_port), (link.b, link.b_port)):
                prefix = () if node.startswith("s") else ("mnexec", "-a", str(net.host(node).pid))
                ends.append(LinkEnd(f"{node}-eth{port}", prefix))
            return ends
    raise ValueError(f"fault target {target!r}: no link between {a} and {b} in {fabric.name}")


def _fault_schedule(scenario: Scenario, fabric: Fabric, net: EmulatedNetwork, fleet):
    """The scenario's faults as a traffic.faults schedule (None without faults)."""
    from traffic import faults

    if not scenario.faults:
        return None
    items = []
    for f in scenario.faults:
        if f.kind in ("link_down", "link_up"):
            ends = _link_ends(fabric, f.target, net)
            action = faults.LinkDown(ends) if f.kind == "link_down" else faults.LinkUp(ends)
        elif f.kind in ("stall", "unstall", "pause_storm", "credit_loss"):
            if f.target not in fleet.control:
                raise ValueError(f"fault {f.kind}: {f.target!r} runs no NIC in this scenario")
            command = {"stall": "stall", "unstall": "resume", "pause_storm": "pause_storm on",
                       "credit_loss": "drop_credits 1000000"}[f.kind]
            action = faults.NicCommand(str(fleet.control[f.target]), command)
        else:
            sw = net.switch(f.target)
            action = faults.Hook(f"{f.kind} {f.target}",
                                 sw.kill if f.kind == "switch_kill" else sw.restart)
        items.append((f.at_s, action))
    return faults.FaultSchedule(items)


def _drain(scenario: Scenario, fabric: Fabric) -> None:
    """Wait until frames in flight have arrived: queues drain at the link rate."""
    depth = scenario.link.buffer_pkts * max(1, len(fabric.switches))
    time.sleep(0.3 + depth / scenario.link.rate_pps
               + 2 * scenario.link.delay_us * len(fabric.switches) / 1e6)


def _read_counters(sm, fabric: Fabric) -> dict[str, dict[tuple[int, str], tuple[int, int]]]:
    """Drop counters of every switch; a switch that cannot answer (killed by a
    fault, crashed) gives none, and is listed under the key None."""
    names = [sw.name for sw in fabric.switches]

    def read(name: str):
        try:
            return sm.read_drop_counters(name)
        except Exception as exc:  # noqa: BLE001 - one dead switch must not lose the run
            return exc

    with ThreadPoolExecutor(max_workers=min(16, len(names))) as pool:
        results = dict(zip(names, pool.map(read, names)))
    counters = {n: r for n, r in results.items() if not isinstance(r, Exception)}
    unreadable = {n: str(r) for n, r in results.items() if isinstance(r, Exception)}
    if unreadable:
        counters[None] = unreadable  # type: ignore[index]
    return counters


TELEMETRY_COUNTERS = ("class_tx", "class_rx", "pause_tx", "pause_rx", "credit_tx", "credit_rx")
TELEMETRY_REGISTERS = ("blocked_ns", "buffer_peak")
# fabric.p4's flow-control state, read with the telemetry: what a switch still holds
FC_STATE_REGISTERS = ("fc_buffer", "fc_queue_head", "fc_queue_tail")
NUM_CLASSES = 8


def _read_telemetry(sm, fabric: Fabric) -> dict:
    """Per switch, per wired port, per class: fabric.p4's telemetry (telemetry.p4).

    {switch: {port: {name: [8 values]}}}; counters give packets. A switch that
    cannot answer, or a program without these objects, gives an "error" entry."""
    def read(name: str) -> dict:
        conn = sm.connections[name]
        ports = [p for p, _peer, _pp in fabric.neighbours(name)]
        indices = [p * NUM_CLASSES + c for p in ports for c in range(NUM_CLASSES)]
        out: dict = {str(p): {} for p in ports}
        try:
            for counter in TELEMETRY_COUNTERS:
                cells = conn.read_counters(counter, indices=indices)
                for p in ports:
                    out[str(p)][counter] = [cells.get(p * NUM_CLASSES + c, (0, 0))[0]
                                            for c in range(NUM_CLASSES)]
        except Exception as exc:  # noqa: BLE001 - telemetry is optional for a report
            return {"error": f"{type(exc).__name__}: {exc}"}
        try:  # bmv2's P4Runtime server cannot read registers (UNIMPLEMENTED): counters stay
            for register in TELEMETRY_REGISTERS + FC_STATE_REGISTERS:
                cells = conn.read_register(register, indices=indices)
                for p in ports:
                    out[str(p)][register] = [cells.get(p * NUM_CLASSES + c, 0)
                                             for c in range(NUM_CLASSES)]
        except Exception as exc:  # noqa: BLE001 - telemetry is optional for a report
            for p in ports:
                out[str(p)]["registers_unread"] = f"{type(exc).__name__}: {exc}"
        return out

    names = [sw.name for sw in fabric.switches]
    with ThreadPoolExecutor(max_workers=min(16, len(names))) as pool:
        return dict(zip(names, pool.map(read, names)))


def _paused_ports(telemetry: dict, window_ns: int, share: float = 0.01) -> list[dict]:
    """(switch, port, class) blocked by pauses or missing credit for more than
    `share` of the traffic window, or that sent pauses: DESIGN.md's stall spread."""
    out = []
    for switch, ports in sorted(telemetry.items()):
        if "error" in ports:
            continue
        for port, t in sorted(ports.items(), key=lambda kv: int(kv[0])):
            for cls in range(NUM_CLASSES):
                blocked = t.get("blocked_ns", [0] * NUM_CLASSES)[cls]
                pauses = t.get("pause_tx", [0] * NUM_CLASSES)[cls]
                if (window_ns and blocked > share * window_ns) or pauses:
                    out.append({"switch": switch, "port": int(port), "class": cls,
                                "blocked_ms": round(blocked / 1e6, 3), "pauses_sent": pauses})
    return out


def _held_at_end(telemetry: dict) -> list[dict]:
    """(switch, port, class) with frames still in a receive buffer (`buffered`, by ingress
    port) or waiting at a transmit gate (`waiting`, by egress port) when the run ended."""
    out = []
    for switch, ports in sorted(telemetry.items()):
        if "error" in ports:
            continue
        for port, t in sorted(ports.items(), key=lambda kv: int(kv[0])):
            zeros = [0] * NUM_CLASSES
            buffered = t.get("fc_buffer", zeros)
            head, tail = t.get("fc_queue_head", zeros), t.get("fc_queue_tail", zeros)
            for cls in range(NUM_CLASSES):
                waiting = (tail[cls] - head[cls]) % (1 << 32)
                if buffered[cls] or waiting:
                    out.append({"switch": switch, "port": int(port), "class": cls,
                                "buffered": buffered[cls], "waiting": waiting})
    return out


def _split_unreadable(counters: dict) -> tuple[dict, dict]:
    counters = dict(counters)
    return counters, counters.pop(None, {})


def _counters_json(counters: dict, run_id: str | None = None) -> dict:
    out: dict = {} if run_id is None else {"run_id": run_id}
    out.update({sw: {f"port{port}/{reason}": {"packets": p, "bytes": b}
                     for (port, reason), (p, b) in sorted(per.items())}
                for sw, per in counters.items()})
    return out


def _flows(flow_files) -> dict[int, tuple[str, int]]:
    """Flow id -> (source host, DLID), from the NICs' FLOWS.json files."""
    out: dict[int, tuple[str, int]] = {}
    for path in flow_files:
        data = json.loads(Path(path).read_text())
        for flow in data.get("flows", ()):
            out.setdefault(flow["flow"], (data["name"], flow["dlid"]))
    return out


def _flow_paths(fabric: Fabric, routes, flows: dict[int, tuple[str, int]],
                lids: dict[str, int]) -> dict[int, list[str]]:
    """Flow id -> the links ("a-b") its frames cross on the routes installed at the start."""
    host_of_lid = {lid: name for name, lid in lids.items()}
    return {flow: _path_links(fabric, routes, src, dlid, host_of_lid)
            for flow, (src, dlid) in flows.items()}


def _protected_flows(link: str, flow_paths: dict[int, list[str]],
                     flows: dict[int, tuple[str, int]], backups) -> set[int]:
    """Flows whose path enters `link` at a switch holding a backup port for their DLID."""
    ends = set(link.split("-"))
    out = set()
    for flow, links in flow_paths.items():
        for hop in links:
            upstream, _, downstream = hop.partition("-")
            if {upstream, downstream} == ends:
                if backups.get(upstream, {}).get(flows[flow][1]) is not None:
                    out.add(flow)
                break
    return out


def _path_links(fabric: Fabric, routes, src: str, dlid: int, host_of_lid) -> list[str]:
    switch, _port = fabric.host_switch(src)
    links = [f"{src}-{switch}"]
    for _hop in range(len(fabric.switches) + 1):
        port = routes.get(switch, {}).get(dlid)
        peer = next((p for q, p, _pp in fabric.neighbours(switch) if q == port), None)
        if peer is None:
            break  # no route: the frames go nowhere (counted as no_route)
        links.append(f"{switch}-{peer}")
        if peer == host_of_lid.get(dlid) or not peer.startswith("s"):
            break
        switch = peer
    return links


VICTIM_FAULTS = ("stall", "pause_storm")


def _victim_goodput(scenario: Scenario, run_dir: Path, metrics: dict, baseline) -> dict:
    """Goodput of the flows that neither start nor end at a faulted host, while the fault
    lasts, over the same interval of the baseline run (offsets from each traffic start)."""
    from traffic.analysis import arrivals_from_recv_logs, victim_goodput

    out: dict = {"baseline_run": str(baseline.run_dir), "victim_goodput_ratio": None}
    faulted = {f.target for f in scenario.faults if f.kind in VICTIM_FAULTS}
    starts = [f.at_s for f in scenario.faults if f.kind in VICTIM_FAULTS]
    base_start = baseline.metrics.get("traffic_start_ns")
    if not faulted or metrics.get("traffic_start_ns") is None or base_start is None:
        out["victim_goodput"] = {"error": "no stall or pause storm, or a run without traffic"}
        return out
    begin = min(starts)
    ends = [f.at_s for f in scenario.faults if f.kind in ("unstall",) and f.at_s > begin]
    end = min(ends) if ends else scenario.duration_s
    flows = _flow_hosts(run_dir)
    victims = sorted(flow for flow, (src, dst) in flows.items()
                     if src not in faulted and dst not in faulted)
    fault_arrivals = arrivals_from_recv_logs(sorted((run_dir / "nics").glob("*.recv.csv")))
    base_arrivals = arrivals_from_recv_logs(
        sorted((baseline.run_dir / "nics").glob("*.recv.csv")))
    # The baseline's victims may finish before the fault would have ended: compare over
    # the part of the interval in which the baseline still moved victim traffic.
    last = max((max(base_arrivals.get(f, [0])) for f in victims), default=0) - base_start
    end = min(end, last / 1e9) if last > 0 else end
    if end <= begin:
        out["victim_goodput"] = {"error": "the baseline's victims finished before the fault"}
        return out
    window = (int(begin * 1e9), int(end * 1e9))
    result = victim_goodput(fault_arrivals, base_arrivals, victims,
                            tuple(metrics["traffic_start_ns"] + t for t in window),
                            tuple(base_start + t for t in window))
    out["victim_goodput"] = {**result, "victims": victims, "faulted_hosts": sorted(faulted),
                             "window_s": [begin, round(end, 3)]}
    out["victim_goodput_ratio"] = result["ratio"]
    return out


def _flow_hosts(run_dir: Path) -> dict[int, tuple[str, str]]:
    """Flow id -> (source host, destination host), from the run's flow files."""
    try:
        book = json.loads((run_dir / "address_book.json").read_text())["hosts"]
    except (OSError, ValueError, KeyError):
        return {}
    host_of_lid = {entry["lid"]: name for name, entry in book.items()}
    return {flow: (src, host_of_lid.get(dlid, "?"))
            for flow, (src, dlid) in _flows(sorted((run_dir / "flows").glob("*.flows.json"))).items()}


def _link_failures(scenario: Scenario, events, timeline: list[dict]) -> list[dict]:
    """Each link_down fault that ran: when it went down and when the data plane stopped
    using it (the later of its two ends' local switchover, or global reroute where there
    was none)."""
    failures = []
    for fault in scenario.faults:
        if fault.kind != "link_down":
            continue
        e = next((e for e in events if e.name.startswith("link_down")
                  and e.at_s == fault.at_s and e.started_ns), None)
        if e is None:
            continue  # cancelled before its time
        link, ends = fault.target, set(fault.target.split("-"))
        restored = [r.get("switchover_ns") or r.get("install_done_ns") for r in timeline
                    if r.get("event") == "port_down" and r.get("link")
                    and {end.split(":")[0] for end in r["link"].split("-")} == ends
                    and r.get("detected_ns", 0) >= e.started_ns - 1e9]
        failures.append({"link": link, "down_ns": e.started_ns,
                         "restored_ns": max(restored) if restored and all(restored) else None})
    return failures


def _send(host, ledger: Ledger, log: Path, src_mac: str, dst_mac: str, slid: int, dlid: int,
          flow: int, count: int, rate: float, payload: int, timeout: float) -> dict:
    """Run one traffic.sender in the host's namespace; its summary as a dict."""
    log.parent.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "traffic.sender", "--iface", f"{host.name}-eth0",
           "--src-mac", src_mac, "--dst-mac", dst_mac, "--slid", str(slid), "--dlid", str(dlid),
           "--flow", str(flow), "--count", str(count), "--rate", str(rate),
           "--payload", str(payload), "--log", str(log)]
    proc = host.popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=str(ROOT))
    ledger.add_process(proc.pid, f"sender on {host.name}")
    try:
        out, err = proc.communicate(timeout=timeout + count / max(rate, 1.0) + 10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise RuntimeError(f"sender on {host.name} did not finish in time") from None
    if proc.returncode != 0:
        raise RuntimeError(f"sender on {host.name} failed: {err.decode(errors='replace').strip()}")
    return json.loads(out.decode().strip().splitlines()[-1])


def _verdict(scenario: Scenario, result: dict) -> str:
    if result.get("partial"):
        return "partial"
    collectives = result.get("collectives")
    if collectives is not None and result.get("cct_ms") is None:
        blocked = sorted(name for name, s in (result.get("nics") or {}).items()
                         if not s.get("done") and s.get("flow_control", {}).get("blocked_at_end"))
        if blocked:
            # Hosts still had frames the link would not take when time ran out: a fabric
            # that stopped moving (a deadlock, or a stall nobody bounded). What did not
            # arrive is held in switch buffers, not lost.
            result["blocked_hosts"] = blocked
            held = result.get("held_in_fabric") or max(0, result.get("unexplained_loss") or 0)
            result["held_in_fabric"] = held
            if held:
                result["suspect"] = False
                result["problems"] = [p for p in result.get("problems", [])
                                      if not p.startswith("suspect:")]
                result["problems"].append(
                    f"{held} transmission(s) still held in the fabric when it stopped moving "
                    f"(hosts {', '.join(blocked)} blocked by the link at the end)")
            return "stalled"
        if (result.get("unexplained_loss") or 0) > 0:
            return "fail"  # a frame vanished where no counter saw it
        if result.get("lost"):
            return "incomplete"  # counted drops and no retransmission (transport "ud")
        return "stalled"
    if (result.get("unexplained_loss") or 0) > 0:
        return "fail"  # a frame vanished where no counter saw it
    checks_ok = all(c.get("ok") for c in result.get("checks", {}).values())
    lossless_expected = scenario.traffic.rate_pps < scenario.link.rate_pps
    if not checks_ok or (result.get("unexplained_loss") or 0) > 0:
        return "fail"
    if lossless_expected and result["lost"]:
        return "fail"
    return "pass"


def _write_report(run_dir: Path, scenario: Scenario, metrics: dict) -> None:
    """report.md and report.html with plots; the short report if plotting fails."""
    try:
        from traffic.report import write_report

        write_report(run_dir)
    except Exception as exc:  # noqa: BLE001 - the metrics are written; the report is extra
        (run_dir / "report.md").write_text(
            report_markdown(scenario, metrics) + f"\n(plots left out: {exc})\n")


SWEEP_COLUMNS = ("sent", "received", "lost", "unexplained_loss", "reordered", "pause_frames",
                 "credit_frames", "cct_ms", "busbw", "recovery_gap_ms", "verdict")


def run_sweep(points: list[tuple[str, Scenario]], target: Target, results_root: Path,
              status: StatusLine | None = None, program_source: Path = FABRIC_P4
              ) -> tuple[Path, list[dict]]:
    """Every sweep point one after another; one table (sweep.json, sweep.md) over all."""
    rows = []
    name = points[0][1].name
    sweep_dir = Path(results_root) / (time.strftime("%Y%m%d-%H%M%S") + f"-{name}-sweep")
    sweep_dir.mkdir(parents=True, exist_ok=True)
    for i, (label, scenario) in enumerate(points, 1):
        if status is not None:
            status.set_phase(f"sweep point {i}/{len(points)}: {label}")
        result = run(scenario, target, sweep_dir, status, program_source)
        row = {"point": label, "run": result.run_dir.name}
        row.update({k: result.metrics.get(k) for k in SWEEP_COLUMNS})
        rows.append(row)
        _write_json(sweep_dir / "sweep.json", rows)  # after every point: nothing is lost
        (sweep_dir / "sweep.md").write_text(sweep_table(rows) + "\n")
    try:
        from traffic.report import write_sweep_report

        write_sweep_report(sweep_dir)
    except Exception as exc:  # noqa: BLE001 - sweep.json and sweep.md are written
        print(f"fabriclab: sweep report left out: {exc}", file=sys.stderr)
    return sweep_dir, rows


def sweep_table(rows: list[dict]) -> str:
    """One line per sweep point, fixed columns (values as measured, '-' where n/a)."""
    cols = ("point", *SWEEP_COLUMNS)
    widths = {c: max(len(c), *(len(_cell(r.get(c))) for r in rows)) for c in cols}
    lines = ["  ".join(c.rjust(widths[c]) for c in cols)]
    for r in rows:
        lines.append("  ".join(_cell(r.get(c)).rjust(widths[c]) for c in cols))
    return "\n".join(lines)


def _cell(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def report_markdown(scenario: Scenario, metrics: dict) -> str:
    lines = [f"# {scenario.name}", "", scenario.description, "",
             f"* topology: `{scenario.topology}`, flow control: `{scenario.flow_control.value}`, "
             f"target: `{metrics.get('target')}`",
             f"* verdict: **{metrics.get('verdict')}**"]
    if metrics.get("error"):
        lines.append(f"* error: {metrics['error']}")
    for key in ("sent", "received", "lost", "unexplained_loss", "reordered", "duplicates",
                "pause_frames", "credit_frames", "cct_ms", "algbw", "busbw", "recovery_gap_ms"):
        if key in metrics:
            lines.append(f"* {key}: {metrics[key]}")
    for name, check in metrics.get("checks", {}).items():
        lines.append(f"* check {name}: {'ok' if check.get('ok') else 'FAILED'} ({check})")
    return "\n".join(lines) + "\n"
