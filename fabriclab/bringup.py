"""`fabriclab bringup`: from power-on to a verdict on a fabric (docs/run.md, "Bring-up").

    power-on    topologies/network.py   the fabric as delivered (with --fault's cable and
                                        switch faults), switches started
    connect     controller/sm.py        a P4Runtime session to every switch
    programs    controller/acceptance   intended program where none runs; every switch's
                                        cookie and P4Info read back and compared
    cabling     controller/acceptance   discovery compared with the intended fabric
    routing     controller/bringup.py   LIDs, routes around bad cables, flow control
    stress      fabriclab/stress.py     pairwise rounds (fabriclab/stress_plan.py), then
                                        all-to-all; counters read over P4Runtime
    verdict     fabriclab/acceptance.py acceptance.json, .md, .html

A phase that cannot go on (a switch unreachable or refusing the pipeline) ends the
bring-up with the reason in the report; whatever was created is removed by the ledger.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

from fabriclab import results
from fabriclab.acceptance import Acceptance, judge_all_to_all, judge_flow_path
from fabriclab.plan import bringup_fault
from fabriclab.scenario import LinkSpec, Scenario, ScenarioError, TrafficSpec
from fabriclab.status import StatusLine
from topologies.description import Fabric, LinkParams
from topologies.generators import TopologyError, build
from topologies.ledger import Ledger, cleanup_stale
from topologies.targets import SwitchKind, Target, compile_program
from traffic.flow_control import FlowControl

ROOT = Path(__file__).resolve().parent.parent
FABRIC_P4 = ROOT / "p4src" / "fabric.p4"
PAYLOAD = 64
WARM_UP_FRAMES = 10  # per pair of hosts, before the judged phases


@dataclass(frozen=True)
class BringupSettings:
    topology: str
    faults: tuple[str, ...] = ()
    intended: str | None = None  # a net-file of the intended fabric (default: --topo)
    flow_control: FlowControl = FlowControl.LOSSY
    routing: str = "ftree"  # spreads destinations over every up-link: every cable loaded
    rate_pps: int = 1000  # every link's configured rate
    buffer_pkts: int = 128  # every port's buffer (fabric.p4's egress limit, flow control)
    round_s: float = 1.5  # how long each pairwise round loads its links
    all_to_all_frames: int = 40  # frames each host sends each other host
    connect_timeout_s: float = 5.0

    def scenario(self) -> Scenario:
        """The run settings the shared stages take (flow control, NICs)."""
        return Scenario(name="bringup", topology=self.topology, flow_control=self.flow_control,
                        routing=self.routing,
                        link=LinkSpec(rate_pps=self.rate_pps, buffer_pkts=self.buffer_pkts),
                        traffic=TrafficSpec(pattern="alltoall", rate_pps=self.rate_pps,
                                            payload_bytes=PAYLOAD))


class BringupStop(Exception):
    """A phase found the fabric cannot be taken further; the message says why."""


@dataclass
class Context:
    """What the stress phases share (fabriclab/stress.py reads these names)."""

    sm: object
    net: object
    fabric: Fabric
    book: dict
    settings: object  # fabriclab.hosts.NicSettings
    ledger: Ledger
    run_dir: Path
    num_classes: int
    channels: list
    lossless: bool  # congestion may not drop: an all-to-all must complete
    payload: int = PAYLOAD


def intended_fabric(settings: BringupSettings) -> Fabric:
    params = LinkParams(rate_pps=settings.rate_pps, buffer_pkts=settings.buffer_pkts)
    running = build(settings.topology, params)
    if settings.intended:
        from fabriclab.intended import intended_from_file

        return intended_from_file(settings.intended, running, params)
    return running


def bringup(settings: BringupSettings, target: Target, results_root: Path,
            status: StatusLine | None = None,
            program_source: Path = FABRIC_P4) -> tuple[Path, Acceptance]:
    status = status or StatusLine()
    run_dir = results.new_run_dir(results_root, "bringup")
    acc = Acceptance.of(Fabric(settings.topology, (), ()))
    acc.settings = {"topology": settings.topology, "target": target.value,
                    "flow_control": settings.flow_control.value, "routing": settings.routing,
                    "rate_pps": settings.rate_pps, "buffer_pkts": settings.buffer_pkts,
                    "round_s": settings.round_s,
                    "all_to_all_frames": settings.all_to_all_frames,
                    "intended": settings.intended or settings.topology}
    ledger, net = None, None
    try:
        fabric = intended_fabric(settings)
        faults = tuple(bringup_fault(f, fabric) for f in settings.faults)
        acc = replace(Acceptance.of(fabric), settings=acc.settings)
        from fabriclab.bringup_faults import describe, refused_on_target

        acc.faults = [describe(f) for f in faults]
        why = refused_on_target(faults, target.switch is SwitchKind.EMBEDDED)
        if why:
            raise BringupStop(why)
        for line in cleanup_stale():
            print(f"cleaned up after an interrupted run: {line}", file=sys.stderr)
        ledger = Ledger.create(run_dir.name)
        net, program = _power_on(fabric, faults, target, program_source, ledger, run_dir,
                                 status, acc)
        _on_the_fabric(settings, fabric, net, program, ledger, run_dir, status, acc)
    except (BringupStop, ScenarioError, TopologyError) as exc:  # bad input: its own words
        acc.errors.append(str(exc))
    except Exception as exc:  # noqa: BLE001 - the report is still written, with why
        acc.errors.append(f"{type(exc).__name__}: {exc}")
    finally:
        status.set_phase("tearing down")
        leftovers = net.stop() if net is not None else (ledger.teardown() if ledger else [])
        if leftovers:
            acc.problems.append("teardown left: " + ", ".join(leftovers))
        results.write_json(run_dir / "acceptance.json", acc.as_dict())
        from fabriclab.acceptance_report import write

        write(run_dir)
    return run_dir, acc


def _timed(acc: Acceptance, phase: str, status: StatusLine, work):
    status.set_phase(f"bring-up: {phase}")
    t0 = time.monotonic()
    try:
        return work()
    finally:
        acc.phases[phase] = round(acc.phases.get(phase, 0.0) + time.monotonic() - t0, 3)


def _power_on(fabric: Fabric, faults, target: Target, program_source: Path, ledger: Ledger,
              run_dir: Path, status: StatusLine, acc: Acceptance):
    from controller.acceptance import program as intended_program
    from fabriclab.bringup_faults import as_delivered, preload, switch_port_params
    from topologies.network import start_network

    delivered = as_delivered(fabric, faults)
    results.write_json(run_dir / "delivered.json",
                       {"name": delivered.name, "links": [
                           f"{lk.a}:{lk.a_port}-{lk.b}:{lk.b_port}" for lk in delivered.links]})
    compiled = _timed(acc, "compile", status, lambda: compile_program(
        target, program_source, ROOT / "build" / "p4"))

    def start():
        net = start_network(delivered, target, ledger, run_dir / "logs",
                            switch_port_params(delivered, faults),
                            constants=compiled.constants)
        acc.settings["held_frames"] = net.hold.summary()
        preload(faults, net, fabric, intended_program(compiled.p4info, compiled.bmv2_json))
        return net

    return _timed(acc, "power-on", status, start), compiled


def _on_the_fabric(settings: BringupSettings, fabric: Fabric, net, program, ledger: Ledger,
                   run_dir: Path, status: StatusLine, acc: Acceptance) -> None:
    from controller.routing import engine
    from controller.sm import FabricError, SubnetManager, connect_switches
    from topologies.network import host_macs

    try:
        conns = _timed(acc, "connect", status, lambda: connect_switches(
            fabric, net.grpc_addrs, timeout=settings.connect_timeout_s))
    except FabricError as exc:
        for name, why in sorted(exc.errors.items()):
            acc.switches.append({"switch": name, "status": "unreachable", "running": None,
                                 "pushed": False, "detail": f"unreachable: {why}"})
        raise BringupStop(f"{len(exc.errors)} switch(es) unreachable: "
                          + ", ".join(sorted(exc.errors))) from None
    sm = SubnetManager(fabric, conns, engine=engine(settings.routing),
                       host_macs=host_macs(fabric))
    try:
        checks = _timed(acc, "programs", status, lambda: sm.provision_pipelines(
            program.p4info, program.bmv2_json))
        acc.switches = [c.as_dict() for c in checks.values()]
        blocked = [c for c in checks.values() if c.status in ("refused", "unreadable")]
        if blocked:
            raise BringupStop("no usable pipeline on " + "; ".join(
                f"{c.switch} ({c.detail})" for c in blocked))
        _timed(acc, "cabling", status, lambda: _cabling(sm, acc))
        _timed(acc, "routing", status, lambda: _route(settings, sm, fabric, run_dir, net))
        _stress(settings, sm, net, fabric, ledger, run_dir, status, acc)
    finally:
        sm.close()


def _cabling(sm, acc: Acceptance) -> None:
    """Discovery's findings on their links; those links are left out of the routes."""
    for finding in sm.discover_cabling():
        if finding.kind == "unexpected":
            acc.problems.append(finding.text)
            continue
        a, b = finding.link.split("-")
        node, port = a.rsplit(":", 1)
        entry = acc.entries[(node, int(port))]
        entry.cabling = finding.kind
        entry.findings.append(finding.text)
        sm.failed_links.add(entry.link)


def _route(settings: BringupSettings, sm, fabric: Fabric, run_dir: Path, net) -> None:
    """LIDs, routes, SL-to-VL, the address book and flow control; on the switches whose
    hold loop power-on wired (bmv2) the SM turns it on, and PFC paces links that tc
    shapes after the pipeline, as in scenario runs."""
    from controller.bringup import configure_flow_control
    from fabriclab.plan import plan
    from fabriclab.runner import bringup_options

    options = bringup_options(plan(settings.scenario()))
    sm.assign_lids(run_dir / "guid2lid.json")
    sm.install_routes()
    sm.install_sl_to_vl()
    sm.write_address_book(run_dir / "address_book.json")
    configure_flow_control(sm.connections, fabric, options.fc_params, options.frame_bytes,
                           sm.constants, net.hold.switches, net.links_shaped_after_pipeline)


def _stress(settings: BringupSettings, sm, net, fabric: Fabric, ledger: Ledger, run_dir: Path,
            status: StatusLine, acc: Acceptance) -> None:
    from controller.program_layout import layout
    from fabriclab.stress import run_all_to_all, run_round
    from fabriclab.stress_plan import channels, plan_rounds
    from fabriclab.traffic_run import nic_settings

    working = sm.working_fabric()
    scenario = settings.scenario()
    p4info = next(c.p4info for c in sm.connections.values() if c.p4info is not None)
    ctx = Context(sm, net, fabric, sm.address_book()["hosts"], nic_settings(scenario), ledger,
                  run_dir, layout(p4info).num_classes, channels(working),
                  settings.flow_control is not FlowControl.LOSSY)
    plan = plan_rounds(working, sm.routes, sm.lids)
    for node, port in plan.uncovered:
        acc.entries[(node, port)].notes.append(f"{node}:{port}: no route crosses it")
    # The first frames a switch forwards are slow (its pipeline warms up): a switch
    # stalls, then forwards a burst no buffer absorbs. A short all-to-all first, unjudged.
    _timed(acc, "warm-up", status, lambda: run_all_to_all(ctx, WARM_UP_FRAMES, "warm-up"))
    frames = max(50, round(settings.rate_pps * settings.round_s))
    for i, flows in enumerate(plan.rounds, 1):
        result = _timed(acc, "stress rounds", status,
                        lambda i=i, flows=flows: run_round(i, flows, ctx, frames))
        acc.rounds.append({"name": result.name, "seconds": result.seconds,
                           "flows": result.flows})
        acc.problems += [f"{result.name}: {p}" for p in result.problems]
        for flow in flows:
            judge_flow_path(fabric, [(ch, result.loads[ch]) for ch in flow.path],
                            acc.entries, result.name)
    result = _timed(acc, "all-to-all", status,
                    lambda: run_all_to_all(ctx, settings.all_to_all_frames))
    acc.rounds.append({"name": result.name, "seconds": result.seconds, "flows": []})
    acc.problems += [f"{result.name}: {p}" for p in result.problems]
    judge_all_to_all(fabric, result, acc.entries, ctx.lossless)
