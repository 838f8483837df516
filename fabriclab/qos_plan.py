"""Partitions and QoS in a run's plan: the scenario's [qos] files read and its
[[background]] traffic resolved on the fabric, before anything starts.

A QoS policy file or partitions.conf with an error is refused here with its line
(controller/qos_policy.py, controller/partitions.py); so is a background host
the fabric does not have, or a traffic class the policy does not name.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from controller.partitions import Partitions, PartitionsError, load_partitions
from controller.qos_policy import QosPolicy, QosPolicyError, load_qos_policy
from fabriclab.scenario import SCENARIO_DIR, BackgroundSpec, Scenario, ScenarioError
from topologies.description import Fabric


@dataclass(frozen=True)
class Background:
    """One [[background]] entry with its hosts resolved."""

    spec: BackgroundSpec
    src: tuple[str, ...]
    dst: tuple[str, ...]
    sl: int  # the SL of its traffic class (0 without a policy)


@dataclass(frozen=True)
class QosPlan:
    policy: QosPolicy | None
    policy_file: str  # as the scenario names it ("" = none)
    partitions: Partitions | None
    traffic_class: str  # [traffic]'s class
    traffic_sl: int  # ... and its SL
    background: tuple[Background, ...]

    @property
    def background_hosts(self) -> tuple[str, ...]:
        seen: dict[str, None] = {}
        for b in self.background:
            seen.update(dict.fromkeys(b.src + b.dst))
        return tuple(seen)

    @property
    def class_queues(self) -> bool:
        """Switches need one transmit queue per VL (a policy is in force)."""
        return self.policy is not None


def scenario_file(name: str) -> Path:
    path = Path(name)
    return path if path.is_absolute() else SCENARIO_DIR / path


def plan_qos(scenario: Scenario, fabric: Fabric, ranks: tuple[str, ...]) -> QosPlan | None:
    q = scenario.qos
    if not (q.policy or q.partitions or scenario.background):
        return None
    hosts = [h.name for h in fabric.hosts]
    try:
        policy = load_qos_policy(scenario_file(q.policy)) if q.policy else None
        partitions = load_partitions(scenario_file(q.partitions), hosts) \
            if q.partitions else None
    except (QosPolicyError, PartitionsError) as exc:
        raise ScenarioError(str(exc)) from None

    def sl_of(traffic_class: str) -> int:
        if policy is None:
            return 0
        try:
            return policy.sl_of_class(traffic_class)
        except QosPolicyError as exc:
            raise ScenarioError(f"{scenario.name}: {exc}") from None

    background = []
    for i, b in enumerate(scenario.background):
        src = b.src or ranks
        unknown = [h for h in src + b.dst if h not in hosts]
        if unknown:
            raise ScenarioError(f"[[background]] #{i + 1}: {', '.join(unknown)} not host(s) "
                                f"of {fabric.name}")
        to_self = [h for k, h in enumerate(src) if b.dst[k % len(b.dst)] == h]
        if to_self:  # sender k sends to receiver k mod len(dst)
            raise ScenarioError(f"[[background]] #{i + 1}: {', '.join(to_self)} would send to "
                                f"itself (sender k sends to dst[k mod {len(b.dst)}]; "
                                f"senders: {', '.join(src)})")
        background.append(Background(b, tuple(src), tuple(b.dst), sl_of(b.traffic_class)))
    for name in q.compare:  # refused now rather than after the first runs
        try:
            load_qos_policy(scenario_file(name))
        except QosPolicyError as exc:
            raise ScenarioError(str(exc)) from None
    return QosPlan(policy, q.policy, partitions, q.traffic_class, sl_of(q.traffic_class),
                   tuple(background))
