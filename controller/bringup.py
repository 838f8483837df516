"""The SM's part of starting a run: everything between "the switches are up" and "the
hosts may send".

    push the pipeline -> discover what is cabled and compare it with the intended
    fabric -> LIDs -> routes (and backups) -> SL-to-VL -> flow control on every
    switch -> partitions and QoS, where the scenario has them (controller/qos.py) ->
    the address book the hosts address each other with

`bring_up` returns a `Bringup`: the live SM (the traffic and readout stages use
its connections, and its event loop for faults) and what it decided, as values.
A fabric not cabled as intended stops here with every difference named.
"""

from __future__ import annotations

import time
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

from controller import flow_control as fc
from controller.discovery import compare, discover
from controller.partitions import Partitions
from controller.program_constants import ProgramConstants
from controller.qos import configure_fabric
from controller.qos_policy import QosPolicy
from controller.readout import on_every_switch
from controller.routing import engine as routing_engine
from controller.sm import SubnetManager, connect_switches
from topologies.description import Fabric
from traffic.flow_control import FlowControl, pause_quantum_ns


class CablingError(RuntimeError):
    """What discovery found differs from the intended fabric."""


# NOTIFY frames' egress queue where the switches have 8: strict priority over data
# (priority 0, or a VL's with class queues), as InfiniBand's management VL15 is.
NOTIFY_PRIORITY = 7


@dataclass(frozen=True)
class BringupOptions:
    routing: str = "minhop"  # a controller.routing engine
    fast_reroute: bool = True  # backup ports in the data plane
    notification: bool = True  # with fast_reroute: fault notification upstream (notify.p4)
    vl_layering: bool = True
    flow_control: FlowControl = FlowControl.LOSSY
    fc_params: fc.FlowControlParams = field(default_factory=fc.FlowControlParams)
    frame_bytes: int = 0  # a data frame on the wire: sets the pause quantum per link
    convergence_delay_s: float = 0.0  # the SM's global reroute waits this long (SubnetManager)
    qos_policy: QosPolicy | None = None  # SL -> VL, VL arbitration (controller/qos.py)
    partitions: Partitions | None = None  # P_Key enforcement at host ports
    class_queues: bool = False  # the switches run one egress queue per VL
    priority_queues: int = 1  # egress queues per port the switches were started with
    # switches with a hold loop wired (bmv2, topologies/hold_loop.HoldLoops.switches)
    hold_loops: frozenset[str] = frozenset()
    pace_links: bool = False  # links shaped after the pipeline (tc on bmv2): PFC paces them


@dataclass
class Bringup:
    sm: SubnetManager
    lids: dict[str, int]  # host -> LID
    address_book: dict  # what the SM serves the hosts: {"hosts": {name: {lid, sl, mac}}}
    routes: dict[str, dict[int, int]]  # switch -> dlid -> port, as installed at the start
    backups: dict[str, dict[int, int | None]]  # switch -> dlid -> backup port, likewise
    discovered_links: int
    seconds: float
    qos: dict[str, dict] = field(default_factory=dict)  # switch -> scheduler, P_Key entries

    @property
    def vls_used(self) -> int:
        return len(set(self.sm.vl_of.values())) or 1


def fc_params(mode: FlowControl, *, xoff: int, xon: int, headroom: int, credit_limit: int,
              credit_coalesce: int, hoq_lifetime_us: int, watchdog_detect_us: int,
              watchdog_restore_us: int) -> fc.FlowControlParams:
    """The switches' flow-control parameters in the program's encoding of the mode."""
    return fc.FlowControlParams(
        mode=fc.Mode[mode.name], xoff=xoff, xon=xon, headroom=headroom,
        credit_limit=credit_limit, credit_coalesce=credit_coalesce,
        # HoQ lifetime is InfiniBand's (CREDIT); the PFC watchdog is Ethernet's answer
        hoq_lifetime_us=hoq_lifetime_us if mode is FlowControl.CREDIT else 0,
        watchdog_detect_us=watchdog_detect_us, watchdog_restore_us=watchdog_restore_us)


def configure_flow_control(connections: dict, fabric: Fabric, params: fc.FlowControlParams,
                           frame_bytes: int, constants: ProgramConstants,
                           hold_loops: Collection[str] = (), pace_links: bool = False) -> None:
    """Every switch in `params`' mode; per wired port its link's pause quantum and buffer.
    `constants`: the pushed program's (SubnetManager.constants); `hold_loops`: the switches
    whose hold loop is wired (real bmv2, topologies/hold_loop.HoldLoops.switches): their
    held frames go round it, every other switch's recirculate; `pace_links`: the links are
    shaped after the pipeline (tc), so in PFC mode every port gets a link pacer that keeps
    that backlog within the headroom (fc.pace_bound_frames)."""
    unknown = sorted(set(hold_loops) - {sw.name for sw in fabric.switches})
    if unknown:
        raise ValueError(f"hold loops for switches {fabric.name} does not have: "
                         f"{', '.join(unknown)}")
    paced = pace_links and params.mode is fc.Mode.PFC
    bound = fc.pace_bound_frames(params)

    def one(name: str) -> None:
        quanta, limits, pace = {}, {}, {}
        for link in fabric.links_of(name):
            port, _peer, _peer_port = link.endpoint(name)
            quanta[port] = round(pause_quantum_ns(link.params.rate_pps, frame_bytes))
            limits[port] = link.params.buffer_pkts
            if paced:
                pace[port] = fc.LinkPace.at(link.params.rate_pps, bound)
        fc.configure(connections[name], params, quanta, limits, constants=constants,
                     hold_loop=name in hold_loops, pace=pace or None)

    failed = {n: r for n, r in on_every_switch(fabric, one).items() if isinstance(r, Exception)}
    if failed:
        raise RuntimeError("flow control could not be set on " + ", ".join(
            f"{n} ({type(e).__name__}: {e})" for n, e in sorted(failed.items())))


def check_cabling(sm: SubnetManager, fabric: Fabric) -> int:
    """Probe every switch-to-switch cable; the links found, or CablingError naming each
    difference from the intended fabric (hosts are checked by the traffic itself)."""
    guids = {sw.name: sw.guid for sw in fabric.switches}
    ports = {sw.name: [p for p, _peer, _pp in fabric.neighbours(sw.name)]
             for sw in fabric.switches}
    found = discover(sm.connections, guids, ports)
    problems = compare(fabric, found, check_hosts=False)
    if problems:
        raise CablingError(f"{fabric.name} is not cabled as intended: " + "; ".join(problems))
    return len(found.links)


def bring_up(fabric: Fabric, grpc_addrs: dict[str, str], p4info: Path, bmv2_json: Path,
             host_macs: dict[str, str], options: BringupOptions, run_dir: Path) -> Bringup:
    t0 = time.monotonic()
    sm = SubnetManager(fabric, connect_switches(fabric, grpc_addrs), host_macs=host_macs,
                       engine=routing_engine(options.routing),
                       fast_reroute=options.fast_reroute, vl_layering=options.vl_layering,
                       notification=options.notification,
                       notify_priority=NOTIFY_PRIORITY if options.priority_queues >= 8 else 0)
    sm.convergence_delay_s = options.convergence_delay_s
    try:
        sm.push_pipeline(p4info, bmv2_json)
        links = check_cabling(sm, fabric)
        sm.assign_lids(run_dir / "guid2lid.json")
        sm.install_routes()
        sm.install_sl_to_vl()
        sm.install_notification()
        sm.write_address_book(run_dir / "address_book.json")
        configure_flow_control(sm.connections, fabric, options.fc_params, options.frame_bytes,
                               sm.constants, options.hold_loops, options.pace_links)
        qos = {}
        if options.qos_policy is not None or options.partitions is not None:
            qos = configure_fabric(sm, fabric, options.qos_policy, options.partitions,
                                   options.class_queues)
    except BaseException:
        sm.close()
        raise
    return Bringup(sm, dict(sm.lids), sm.address_book(),
                   {sw: dict(t) for sw, t in sm.routes.items()},
                   {sw: dict(t) for sw, t in sm.backups.items()},
                   links, round(time.monotonic() - t0, 3), qos)
