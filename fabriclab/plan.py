"""A run's plan: the scenario resolved against its topology before anything starts.

The plan is the first stage of a run and needs no root, no switch and no host:
it builds the fabric description, picks the ranks, and resolves every fault's
target on that fabric. A scenario that cannot run on the chosen topology (a
fault on a link the fabric does not have, a stalled host that runs no NIC) is
refused here with one line naming the target and the topology.

Fault targets (scenario `[[faults]] target`):

* a link: `s1-s3` (the two nodes), `s1:3-s3:1` (with ports) or `s1-eth3`;
* a link relative to the traffic, meaningful on any topology:
  `rank:R/uplink:U` is the U-th uplink (1-based, by port) of the switch that
  rank R's host hangs off (an uplink leads to a higher tier; on a flat
  fabric, to another switch);
* a host: `h3`, or `rank:R` (R counts from 0 over the scenario's ranks);
* a switch: `s2`, or `rank:R/switch` (the switch rank R's host hangs off).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from controller.lids import LidMap, LidSpaceExhausted
from controller.routing import RoutingError, engine
from fabriclab.qos_plan import QosPlan, plan_qos
from fabriclab.scenario import FaultSpec, Scenario, ScenarioError
from topologies import link_names
from topologies.description import Fabric, Link, LinkParams, NodeKind
from topologies.generators import build as build_fabric
from traffic.collectives import CollectiveSpec, ScheduleError, schedule

LINK_FAULTS = ("link_down", "link_up")
NIC_FAULTS = ("stall", "unstall", "pause_storm", "credit_loss")
SWITCH_FAULTS = ("switch_kill", "switch_restart")
# Faults a bring-up (`fabriclab bringup --fault KIND:TARGET[@VALUE]`) builds into the
# fabric before the SM sees it: cables and switches as delivered.
CABLE_FAULTS = ("miswire", "missing", "lossy", "slow")  # on switch-to-switch links
PROGRAM_FAULTS = ("old_program", "unreachable")  # on switches
BRINGUP_FAULTS = CABLE_FAULTS + PROGRAM_FAULTS
BRINGUP_FAULT_FORMS = ("miswire:LINK,LINK", "missing:LINK", "lossy:LINK@FRACTION",
                       "slow:LINK@FRACTION", "old_program:SWITCH", "unreachable:SWITCH")
# [traffic] pattern -> traffic/collectives.py's schedule (a stream is no collective)
PATTERN_ALGORITHM = {"allreduce-ring": "ring_allreduce", "allreduce-hd": "hd_allreduce",
                     "alltoall": "alltoall", "incast": "incast", "permutation": "permutation"}
_RANK = re.compile(r"rank:(\d+)(?:/(uplink):(\d+)|/(switch))?$")


class FaultPlanError(ScenarioError):
    """A fault target that means nothing on the chosen topology."""


@dataclass(frozen=True)
class PlannedFault:
    """A scenario fault with its target resolved on the fabric."""

    at_s: float
    kind: str
    target: str  # as the scenario wrote it
    link: Link | None = None  # LINK_FAULTS, CABLE_FAULTS
    node: str = ""  # the host (NIC_FAULTS) or switch (SWITCH_FAULTS, PROGRAM_FAULTS)
    peer: Link | None = None  # miswire: the link whose far end is swapped with `link`'s
    value: float | None = None  # lossy: fraction of frames lost; slow: fraction of the rate

    @property
    def label(self) -> str:
        """What the fault hits, spelled as reports show it (`s1-s3`, `h1`, `s2`)."""
        if self.peer is not None:
            return f"{link_names.node_pair(self.link)},{link_names.node_pair(self.peer)}"
        return link_names.node_pair(self.link) if self.link is not None else self.node


@dataclass(frozen=True)
class RunPlan:
    scenario: Scenario
    fabric: Fabric
    ranks: tuple[str, ...]  # hosts taking part in the traffic, in rank order
    faults: tuple[PlannedFault, ...]
    qos: QosPlan | None = None  # [qos] / [[background]] resolved (fabriclab/qos_plan.py)

    @property
    def nic_hosts(self) -> tuple[str, ...]:
        """Every host that runs a NIC: the ranks, then background hosts that are not."""
        extra = self.qos.background_hosts if self.qos is not None else ()
        return self.ranks + tuple(h for h in extra if h not in self.ranks)


def fabric_for(scenario: Scenario) -> Fabric:
    link = scenario.link
    return build_fabric(scenario.topology,
                        LinkParams(link.rate_pps, link.delay_us, link.buffer_pkts))


def plan(scenario: Scenario, fabric: Fabric | None = None) -> RunPlan:
    """Resolve the scenario on its topology; raises FaultPlanError or ScenarioError."""
    fabric = fabric or fabric_for(scenario)
    ranks = ranks_of(scenario, fabric)
    _check_routing(scenario, fabric)
    faults = tuple(resolve_fault(f, fabric, ranks) for f in scenario.faults)
    _check_pairs(faults, fabric)
    return RunPlan(scenario, fabric, ranks, faults, plan_qos(scenario, fabric, ranks))


def _check_routing(scenario: Scenario, fabric: Fabric) -> None:
    """The routing engine can route this fabric as described (the SM routes the same
    fabric once discovery found it cabled so): ftree refuses a fabric that is no fat tree."""
    try:
        engine(scenario.routing).route(fabric, LidMap().assign(fabric))
    except (RoutingError, LidSpaceExhausted) as exc:
        raise ScenarioError(f"routing {scenario.routing!r} on {fabric.name}: {exc}") from None


def ranks_of(scenario: Scenario, fabric: Fabric) -> tuple[str, ...]:
    t = scenario.traffic
    hosts = [h.name for h in fabric.hosts]
    if t.pattern == "stream":
        ranks = [t.src, t.dst]
        where = "[traffic] src/dst"
    else:
        ranks = list(t.hosts) or hosts
        where = "[traffic] hosts"
    unknown = [h for h in ranks if h not in hosts]
    if unknown:
        raise ScenarioError(f"{where}: {', '.join(unknown)} not host(s) of {fabric.name}")
    if t.pattern != "stream":
        _check_collective(scenario, ranks, where)
    return tuple(ranks)


def _check_collective(scenario: Scenario, ranks: list[str], where: str) -> None:
    """The collective can be scheduled on these ranks (traffic/collectives.py), checked
    here rather than once the fabric is up."""
    t = scenario.traffic
    twice = sorted({h for h in ranks if ranks.count(h) > 1})
    if twice:
        raise ScenarioError(f"{where}: {', '.join(twice)} listed more than once")
    if t.pattern == "incast" and t.dst not in ranks:
        raise ScenarioError(f"[traffic] dst {t.dst!r} (the incast's root; default h2) is "
                            f"not one of the ranks: {', '.join(ranks)}")
    try:
        schedule(CollectiveSpec(PATTERN_ALGORITHM[t.pattern], len(ranks), t.message_bytes,
                                max(1, t.payload_bytes)))
    except ScheduleError as exc:
        raise ScenarioError(f"{where} ({', '.join(ranks)}), pattern {t.pattern}: "
                            f"{exc}") from None


def resolve_fault(fault: FaultSpec, fabric: Fabric, ranks: tuple[str, ...]) -> PlannedFault:
    where = f"fault {fault.kind} at {fault.at_s}s, target {fault.target!r} on {fabric.name}"
    if fault.kind in LINK_FAULTS:
        return PlannedFault(fault.at_s, fault.kind, fault.target,
                            link=_link_target(fault.target, fabric, ranks, where))
    node = _node_target(fault.target, fabric, ranks, where)
    if fault.kind in NIC_FAULTS:
        if fabric.node(node).kind is not NodeKind.HOST:
            raise FaultPlanError(f"{where}: {node} is not a host")
        if node not in ranks:
            raise FaultPlanError(f"{where}: {node} runs no NIC in this scenario "
                                 f"(ranks: {', '.join(ranks)})")
    elif fault.kind in SWITCH_FAULTS and fabric.node(node).kind is not NodeKind.SWITCH:
        raise FaultPlanError(f"{where}: {node} is not a switch")
    return PlannedFault(fault.at_s, fault.kind, fault.target, node=node)


# a fault that ends a state another began: (it, the one it ends)
_ENDS = {"link_up": "link_down", "unstall": "stall"}
_STATE = {"link_down": "down", "stall": "stalled"}


def _check_pairs(faults: tuple[PlannedFault, ...], fabric: Fabric) -> None:
    """In time order, a link goes down only while it is up and up only while it is down,
    and a NIC is unstalled only while stalled (and stalled only while not): a fault that
    would change nothing is a mistake in the schedule, said with the plan."""
    begun: dict[tuple[str, str], float] = {}  # (fault that began it, target) -> at_s
    for f in sorted(faults, key=lambda f: f.at_s):
        where = f"fault {f.kind} at {f.at_s:g}s, target {f.label} on {fabric.name}"
        if f.kind in _ENDS:
            if begun.pop((_ENDS[f.kind], f.label), None) is None:
                raise FaultPlanError(f"{where}: {f.label} is not {_STATE[_ENDS[f.kind]]} "
                                     f"then (no {_ENDS[f.kind]} of it before)")
        elif f.kind in _ENDS.values():
            if (f.kind, f.label) in begun:
                raise FaultPlanError(f"{where}: {f.label} is already {_STATE[f.kind]} "
                                     f"(since {begun[f.kind, f.label]:g}s)")
            begun[f.kind, f.label] = f.at_s


def _rank_host(index: str, ranks: tuple[str, ...], where: str) -> str:
    if int(index) >= len(ranks):
        raise FaultPlanError(f"{where}: there are {len(ranks)} ranks (0..{len(ranks) - 1})")
    return ranks[int(index)]


def _link_target(target: str, fabric: Fabric, ranks: tuple[str, ...], where: str) -> Link:
    m = _RANK.match(target)
    if m is None:
        try:
            return link_names.find(fabric, target)
        except link_names.LinkNameError as exc:
            raise FaultPlanError(f"{where}: {exc}") from None
    if m.group(2) is None:
        raise FaultPlanError(f"{where}: a link fault needs a link, e.g. `rank:0/uplink:1`")
    switch, _port = fabric.host_switch(_rank_host(m.group(1), ranks, where))
    ups = uplinks(fabric, switch)
    nth = int(m.group(3))
    if not 1 <= nth <= len(ups):
        raise FaultPlanError(f"{where}: {switch} has {len(ups)} uplink(s)")
    return ups[nth - 1]


def uplinks(fabric: Fabric, switch: str) -> list[Link]:
    """A switch's links towards a higher tier, by port; on a flat fabric, to other switches."""
    tier = fabric.node(switch).tier
    to_switches = [(port, link) for link in fabric.links_of(switch)
                   for port, peer, _pp in [link.endpoint(switch)]
                   if fabric.node(peer).kind is NodeKind.SWITCH]
    higher = [(p, lk) for p, lk in to_switches
              if fabric.node(lk.endpoint(switch)[1]).tier > tier]
    return [lk for _p, lk in sorted(higher or to_switches, key=lambda pl: pl[0])]


def _node_target(target: str, fabric: Fabric, ranks: tuple[str, ...], where: str) -> str:
    m = _RANK.match(target)
    if m is None:
        try:
            fabric.node(target)
        except KeyError:
            raise FaultPlanError(f"{where}: {fabric.name} has no node {target!r}") from None
        return target
    if m.group(2) is not None:
        raise FaultPlanError(f"{where}: `uplink` names a link; this fault needs a host "
                             "(`rank:R`) or a switch (`rank:R/switch`)")
    host = _rank_host(m.group(1), ranks, where)
    return fabric.host_switch(host)[0] if m.group(4) else host


def bringup_fault(text: str, fabric: Fabric) -> PlannedFault:
    """`KIND:TARGET[@VALUE]` (BRINGUP_FAULT_FORMS) resolved on `fabric`; FaultPlanError
    naming the problem otherwise."""
    kind, sep, rest = text.partition(":")
    where = f"fault {text!r} on {fabric.name}"
    if not sep or kind not in BRINGUP_FAULTS:
        raise FaultPlanError(f"{where}: expected one of {', '.join(BRINGUP_FAULT_FORMS)}")
    target, at, raw = rest.partition("@")
    value = None
    if kind in ("lossy", "slow"):
        try:
            value = float(raw)
        except ValueError:
            value = -1.0
        if not at or not 0 < value < 1:
            raise FaultPlanError(f"{where}: needs @FRACTION between 0 and 1, e.g. "
                                 f"{kind}:s1-s3@{0.05 if kind == 'lossy' else 0.5}")
    elif at:
        raise FaultPlanError(f"{where}: {kind} takes no @VALUE")
    if kind in PROGRAM_FAULTS:
        node = _node_target(target, fabric, (), where)
        if fabric.node(node).kind is not NodeKind.SWITCH:
            raise FaultPlanError(f"{where}: {node} is not a switch")
        return PlannedFault(0.0, kind, target, node=node)
    names = target.split(",")
    if len(names) != (2 if kind == "miswire" else 1):
        raise FaultPlanError(f"{where}: " + ("miswire swaps two links: LINK,LINK"
                                             if kind == "miswire" else "names one link"))
    links = [_link_target(n, fabric, (), where) for n in names]
    for link in links:
        if not (link_names.is_switch(fabric, link.a) and link_names.is_switch(fabric, link.b)):
            raise FaultPlanError(f"{where}: {link_names.node_pair(link)} is a host's link; "
                                 "cable faults are on switch-to-switch links")
    if kind == "miswire" and links[0] == links[1]:
        raise FaultPlanError(f"{where}: the two links are the same link")
    return PlannedFault(0.0, kind, target, link=links[0], value=value,
                        peer=links[1] if kind == "miswire" else None)
