"""The traffic stage of a run: a capture and a NIC emulator on every rank, the scenario's
traffic addressed from the SM's address book, the planned faults on schedule.

Every scenario, the plain stream included, runs here: the NICs speak the link's
flow control, so a stream under PFC or CREDIT is measured like a collective.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from controller.bringup import Bringup
from fabriclab.hosts import NicFleet, NicSettings
from fabriclab.plan import LINK_FAULTS, NIC_FAULTS, PATTERN_ALGORITHM, RunPlan
from fabriclab.qos_traffic import apply_qos
from fabriclab.scenario import Scenario
from fabriclab.status import StatusLine
from topologies import link_names, remote
from topologies.cpu_wait import CpuWaitMonitor
from topologies.description import Fabric
from topologies.ledger import Ledger
from topologies.network import EmulatedNetwork
from traffic import faults
from traffic.addressing import SA_ADDRESSES
from traffic.capture import Capture, CaptureStats
from traffic.collectives import CollectiveSpec, address_book, write_flow_files
from traffic.flow_control import FlowControl
from traffic.frames import DATA_HEADER_LEN
from traffic.realtime import AGENT_RT_PRIORITY

UNKNOWN_DLID = 0xBEEF  # inside the unicast range, never assigned by the SM in small fabrics
CHECK_FLOW_ID = 0xFFFF  # flow id of the frames sent to UNKNOWN_DLID
NIC_COMMANDS = {"stall": "stall", "unstall": "resume", "pause_storm": "pause_storm on",
                "credit_loss": "drop_credits 1000000"}


@dataclass
class TrafficRun:
    """What the traffic stage hands on: the NICs' logs and summaries, the captures."""

    ranks: tuple[str, ...]
    spec: CollectiveSpec | None  # None for a plain stream
    flow_files: dict[str, Path]
    start_at: float  # epoch s at which every NIC started sending
    end_at: float  # epoch s when the traffic and its drain were over
    summaries: dict[str, dict]  # NIC summaries (fabriclab.nic/1)
    events: list[faults.FaultEvent]
    sent_logs: list[Path]
    recv_logs: list[Path]
    pcaps: dict[str, Path]
    capture_stats: list[CaptureStats]
    stalled_after_s: float | None
    flow_classes: dict[str, dict] | None = None  # partitions/QoS: flow id -> class, src, dst
    switch_cpu: dict | None = None  # how long the switches waited for a CPU (cpu_wait.py)


def frame_bytes(scenario: Scenario) -> int:
    return DATA_HEADER_LEN + scenario.traffic.payload_bytes


def nic_settings(scenario: Scenario, transport: str | None = None) -> NicSettings:
    """A plain stream's sender keeps the stream's own rate ([traffic] rate_pps); a
    collective's NICs send at the link rate."""
    credit = scenario.flow_control is FlowControl.CREDIT
    t = scenario.traffic
    rate = min(t.rate_pps, scenario.link.rate_pps) if t.pattern == "stream" \
        else scenario.link.rate_pps
    return NicSettings(mode=scenario.flow_control, rate_pps=rate,
                       frame_bytes=frame_bytes(scenario),
                       buffer=scenario.credit.buffer_pkts if credit else scenario.link.buffer_pkts,
                       xoff=scenario.pfc.xoff, xon=scenario.pfc.xon,
                       credit_coalesce=scenario.credit.coalesce,
                       transport=transport or scenario.traffic.transport,
                       rc_options=("--rc-timeout-ms", str(t.rc_timeout_ms), "--rc-rto", t.rc_rto,
                                   "--rc-rto-min-ms", str(t.rc_rto_min_ms),
                                   "--rc-retry-limit", str(t.rc_retry_limit),
                                   "--rc-paused-timeouts", t.rc_paused_timeouts,
                                   "--rc-timeout-resend", t.rc_timeout_resend,
                                   "--rc-retransmission", t.rc_retransmission,
                                   "--rc-window-control", t.rc_window_control,
                                   "--rc-window", str(t.rc_window)))


def _hosts(bringup: Bringup) -> dict[str, dict]:
    return bringup.address_book["hosts"]


def write_flows(plan: RunPlan, bringup: Bringup, flows_dir: Path
                ) -> tuple[CollectiveSpec | None, dict[str, Path]]:
    """Each rank's FLOWS.json, naming its peers: every NIC asks the SM's SA for their
    addresses, and its own LID, at start (traffic/addressing.py)."""
    t, book = plan.scenario.traffic, _hosts(bringup)
    if t.pattern == "stream":
        return None, _write(flows_dir, {
            t.src: {"name": t.src, "addresses": SA_ADDRESSES, "recvs": [],
                    "flows": [{"flow": 1, "dst": t.dst, "count": t.frames,
                               "payload": t.payload_bytes}]},
            t.dst: {"name": t.dst, "addresses": SA_ADDRESSES, "flows": [],
                    "recvs": [{"coll_id": 0, "step": 0, "src": t.src, "frames": t.frames}]}})
    ranks = plan.ranks
    root = ranks.index(t.dst) if t.dst in ranks else 0
    job = plan.scenario.training  # a training job: its iterations, each after its compute
    spec = CollectiveSpec(algorithm=PATTERN_ALGORITHM[t.pattern], n=len(ranks),
                          message_bytes=t.message_bytes, payload=t.payload_bytes,
                          reps=job.iterations or t.repetitions, root=root,
                          compute_s=job.compute_ms / 1e3 if job.iterations else 0.0)
    endpoints = address_book({h: (book[h]["lid"], book[h]["mac"], book[h]["sl"])
                              for h in ranks})
    return spec, write_flow_files(spec, endpoints, flows_dir, via_sa=True)


def _write(out_dir: Path, files: dict[str, dict]) -> dict[str, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {}
    for name, content in files.items():
        paths[name] = out_dir / f"{name}.flows.json"
        paths[name].write_text(json.dumps(content, indent=1) + "\n")
    return paths


def fault_schedule(plan: RunPlan, net: EmulatedNetwork, fleet: NicFleet
                   ) -> faults.FaultSchedule | None:
    """The planned faults as a traffic.faults schedule (None without faults)."""
    if not plan.faults:
        return None
    items = []
    for f in plan.faults:
        if f.kind in LINK_FAULTS:
            ends = [end for node, port in ((f.link.a, f.link.a_port), (f.link.b, f.link.b_port))
                    if (end := _link_end(plan, net, node, port)) is not None]
            action = faults.LinkDown(ends) if f.kind == "link_down" else faults.LinkUp(ends)
        elif f.kind in NIC_FAULTS:
            supervised = net.remote_host(f.node) is not None
            action = faults.NicCommand(str(fleet.control[f.node]), NIC_COMMANDS[f.kind],
                                       send=(lambda cmd, n=f.node: fleet.command(n, cmd))
                                       if supervised else None)
        else:
            sw = net.switch(f.node)
            action = faults.Hook(f"{f.kind} {f.node}",
                                 sw.kill if f.kind == "switch_kill" else sw.restart)
        items.append((f.at_s, action))
    return faults.FaultSchedule(items, rt_priority=AGENT_RT_PRIORITY)


def _link_end(plan: RunPlan, net: EmulatedNetwork, node: str, port: int
              ) -> faults.LinkEnd | None:
    """Where `ip link set` reaches a node's port: its namespace from here, or its
    server's supervisor (a host's end through `mnexec -a` its shell). None where the
    cut leaves this end administratively up (a bmv2 port facing a host: net.cut_point)."""
    iface = net.cut_point(node, port)
    if iface is None:
        return None
    is_switch = link_names.is_switch(plan.fabric, node)
    server = net.remote_host(node)
    if server is not None:
        pid = None if is_switch else net.host(node).pid
        return faults.LinkEnd(iface, run=lambda argv: server.run(argv, mnexec_pid=pid))
    prefix = net.run_prefix(node) if is_switch else ["mnexec", "-a", str(net.host(node).pid)]
    return faults.LinkEnd(iface, tuple(prefix))


def drain(scenario: Scenario, fabric: Fabric) -> None:
    """Wait until frames in flight have arrived: queues drain at the link rate."""
    depth = scenario.link.buffer_pkts * max(1, len(fabric.switches))
    time.sleep(0.3 + depth / scenario.link.rate_pps
               + 2 * scenario.link.delay_us * len(fabric.switches) / 1e6)


def run_traffic(plan: RunPlan, net: EmulatedNetwork, bringup: Bringup, run_dir: Path,
                ledger: Ledger, status: StatusLine) -> TrafficRun:
    scenario, t = plan.scenario, plan.scenario.traffic
    spec, flow_files = write_flows(plan, bringup, run_dir / "flows")
    flow_classes = None
    if plan.qos is not None:
        flow_classes = apply_qos(plan.qos, flow_files, _hosts(bringup), t.payload_bytes,
                                 run_dir / "flows")
    ranks = plan.nic_hosts
    hosts = {h: net.host(h) for h in ranks}
    pcaps = {h: run_dir / "pcaps" / f"{h}.pcap" for h in ranks}
    captures = {}
    for h in ranks:
        captures[h] = Capture(net.intf(h, 0), pcaps[h], spawn=hosts[h].popen, direction="in")
        captures[h].start()
        remote.record(ledger, captures[h].process, f"tcpdump on {h}")
    fleet = NicFleet(run_dir / "nics", ledger, collect=net.collect_files)
    stats, events = [], []
    cpu = CpuWaitMonitor(net.switch_pids())
    cpu.start()
    try:
        status.set_phase(f"traffic: {t.pattern} over {len(ranks)} hosts "
                         f"({scenario.flow_control.value})")
        book = _hosts(bringup)
        # no LIDs given: each NIC learns its own and its peers' from the SA
        start_at = fleet.start(hosts, flow_files, None, {h: book[h]["mac"] for h in ranks},
                               nic_settings(scenario), scenario.duration_s)
        schedule = fault_schedule(plan, net, fleet)
        if schedule is not None:
            schedule.start(int(start_at * 1e9))
        summaries = fleet.wait(scenario.duration_s + 15, on_progress=status.set_counts,
                               stall_s=scenario.stall_timeout_s, start_at=start_at)
        if schedule is not None:
            schedule.cancel()
            events = schedule.join(5)
            for note in schedule.notes:  # detection then includes the injector's waits
                print(f"fabriclab: note: link faults at normal scheduling ({note})",
                      file=sys.stderr)
        drain(scenario, plan.fabric)
    finally:
        switch_cpu = cpu.stop()
        fleet.stop()
        for cap in captures.values():
            stats.append(cap.stop())
        net.collect_files()  # supervised servers: the captures, into the run directory
    return TrafficRun(ranks, spec, flow_files, start_at, time.time(), summaries, events,
                      fleet.sent_logs(), fleet.recv_logs(), pcaps, stats, fleet.stalled_after_s,
                      flow_classes, switch_cpu)


def check_duration_s(frames: int, rate_pps: float) -> float:
    """Time for the unknown-DLID check's NIC: 10 s, or twice what its frames take at its rate
    (every frame must leave, or the check counts frames never sent as not dropped)."""
    return max(10.0, 2 * frames / rate_pps + 1)


def send_to_unknown_dlid(plan: RunPlan, net: EmulatedNetwork, bringup: Bringup,
                         run_dir: Path, ledger: Ledger, frames: int) -> dict[str, dict]:
    """`frames` DATA frames from the first rank (a stream's sender) to UNKNOWN_DLID,
    through its NIC (UD: nobody acknowledges them); the NIC's summary. The first switch
    must drop and count them as no_route. The address is forged on purpose (no SA
    would give it), so this file carries the NIC's addresses itself."""
    scenario, src = plan.scenario, plan.ranks[0]
    book, peer = _hosts(bringup)[src], _hosts(bringup)[plan.ranks[-1]]
    flow_files = _write(run_dir / "checks" / "flows", {src: {
        "name": src, "lid": book["lid"], "mac": book["mac"], "recvs": [],
        "flows": [{"flow": CHECK_FLOW_ID, "dst_mac": peer["mac"], "dlid": UNKNOWN_DLID,
                   "count": frames, "payload": scenario.traffic.payload_bytes}]}})
    fleet = NicFleet(run_dir / "checks" / "nics", ledger, collect=net.collect_files)
    settings = nic_settings(scenario, transport="ud")
    duration = check_duration_s(frames, settings.rate_pps)
    try:
        fleet.start({src: net.host(src)}, flow_files, {src: book["lid"]}, {src: book["mac"]},
                    settings, duration)
        summaries = fleet.wait(duration + 10, stall_s=scenario.stall_timeout_s)
        drain(scenario, plan.fabric)
    finally:
        fleet.stop()
    return summaries
