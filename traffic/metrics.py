"""A run's metrics as a typed, versioned schema: what metrics.json holds.

The runner writes a `RunMetrics`; the report, the CLI and the tests read one
back with `RunMetrics.from_json`. Each field is declared once here, with its
type; the JSON is the same field names (`to_json`). Definitions of the figures
are traffic/analysis.py's (DESIGN.md "Measurements").

Versions: `fabriclab.metrics/2` (this module) adds `reconciliation` and
`verdict_reasons` to `/1`, whose files read as they are (the fields /1 lacked
stay empty; a file without `schema` is a run that failed before its analysis,
read as /1). Any other schema, or a file that is no metrics object, raises
MetricsSchemaError naming the file and what it found.

Records that another part produces with its own schema (a NIC emulator's
summary, `fabriclab.nic/1`; an SM timeline record; the capacity check) are
kept as plain objects here.
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SCHEMA = "fabriclab.metrics/2"
OLDER_SCHEMAS = ("fabriclab.metrics/1",)


class MetricsSchemaError(ValueError):
    """metrics.json of a schema this version cannot read, or not a metrics object."""


@dataclass(frozen=True)
class Delay:
    """One-way delay of a flow's frames, microseconds."""

    min: float
    mean: float
    max: float


@dataclass(frozen=True)
class FlowMetrics:
    sent: int | None = None
    received: int | None = None
    lost: int | None = None
    reordered: int = 0
    duplicates: int = 0
    transmissions: int | None = None
    retransmitted: int | None = None
    lost_in_fabric: int | None = None
    rx_pps: float | None = None
    delay_us: Delay | None = None
    first_rx_ns: int | None = None
    last_rx_ns: int | None = None
    rate_kept: bool | None = None


@dataclass(frozen=True)
class KindAccount:
    """One frame kind's figures: sent by NICs, seen by the receivers' captures."""

    kind: str  # "data", "rc_control" (ACK/NAK), "pause", "credit"
    sent: int | None  # transmitted by the NICs (None: link-local, sent by switches)
    received: int  # captured at the receiving hosts
    processed: int | None = None  # link-local kinds: what the NICs say they took
    lost: int | None = None  # sent - received, where both are known


@dataclass(frozen=True)
class Reconciliation:
    """Every frame lost in the fabric against what explains it (traffic/reconcile.py)."""

    kinds: tuple[KindAccount, ...] = ()
    lost: int = 0  # data + RC control frames transmitted and never captured
    counted_drops: int = 0  # switch drop counters, reasons that apply to fabric frames
    on_failed_links: int = 0  # of the rest, lost inside a failed link's window
    held_in_fabric: int = 0  # still in switch buffers when the run ended
    unexplained: int = 0  # lost - counted - on failed links - held; != 0 fails the run
    problems: tuple[str, ...] = ()  # each figure that does not reconcile, one line


@dataclass(frozen=True)
class CollectiveTime:
    ranks: int = 0
    complete: bool = False
    start_ns: int | None = None
    end_ns: int | None = None
    cct_ms: float | None = None


@dataclass(frozen=True)
class LinkFailure:
    link: str  # `a-b`
    down_ns: int
    restored_ns: int | None = None  # when the data plane stopped using it


@dataclass(frozen=True)
class RecoveryGap:
    gap_ms: float | None
    recovery_ms: float | None
    pre_failure_pps: float
    protected: bool = False  # the switch sending into the failed link had a backup
    direction: str | None = None  # how the flow crosses the failed link: `a->b`


@dataclass(frozen=True)
class FaultRecord:
    name: str
    at_s: float
    started_ns: int | None = None
    error: str = ""


@dataclass(frozen=True)
class PortStall:
    """A (switch, port, class) paused or credit-blocked: DESIGN.md's stall spread."""

    switch: str
    port: int
    klass: int  # "class" in JSON
    blocked_ms: float
    pauses_sent: int


@dataclass(frozen=True)
class HeldQueue:
    """Frames still in a switch's receive buffer or at a transmit gate at the end."""

    switch: str
    port: int
    klass: int  # "class" in JSON
    buffered: int
    waiting: int


@dataclass(frozen=True)
class UnknownDlidCheck:
    dlid: int
    sent: int
    dropped_no_route: int
    switch: str
    port: int
    ok: bool


@dataclass(frozen=True)
class ArbitrationSetting:
    """One compared QoS policy of a run (fabriclab/qos_compare.py)."""

    policy_file: str = ""
    run: str = ""  # its own result directory
    verdict: str = ""
    cct_ms: float | None = None
    gradient_share_of_solo: float | None = None  # solo CCT / CCT: throughput kept
    checkpoint_share: float | None = None  # background share of the ranks' sends
    checkpoint_frames: int | None = None  # background frames delivered
    arbitration: dict[str, Any] | None = None  # the policy's tables (switch ports)


@dataclass(frozen=True)
class VictimGoodput:
    ratio: float | None = None
    fault_pps: float | None = None
    baseline_pps: float | None = None
    flows: dict[str, float | None] = field(default_factory=dict)
    victims: tuple[int, ...] = ()
    faulted_hosts: tuple[str, ...] = ()
    window_s: tuple[float, ...] = ()
    error: str | None = None  # why there is no ratio


@dataclass(frozen=True)
class FailureGap:
    """One link failure and the receivers' delivery gap it caused (traffic/training.py)."""

    link: str
    down_ns: int
    gap_ms: float | None  # None: no flow crossing the link had frames in flight
    flows: tuple[int, ...] = ()  # the flows crossing it that had frames in flight
    recovered: bool = True  # false: a frame in flight at the failure was never delivered
    usual_wait_ms: float | None = None  # the same flows' median frame wait over the run


@dataclass(frozen=True)
class TrainingIteration:
    index: int
    time_ms: float
    comm_ms: float  # time - compute
    slowed: bool = False  # slower than SLOWED_FACTOR x the fault-free run's slowest
    end_ns: int = 0


@dataclass(frozen=True)
class TrainingMetrics:
    """A training job's figures on one fabric (definitions: traffic/training.py)."""

    fabric: str
    iterations_planned: int
    iterations_done: int
    iterations: tuple[TrainingIteration, ...] = ()
    compute_ms: float = 0.0
    baseline_iteration_ms: float | None = None  # fault-free run's mean
    comm_share: float | None = None
    parallel_efficiency: float | None = None
    iterations_slowed: int = 0
    failures: int = 0  # link failures while the job ran
    failure_gaps: tuple[FailureGap, ...] = ()
    interruptions: int = 0  # a QP exhausted its retry limit (from the NICs' records)
    interrupted_by: tuple[str, ...] = ()
    interrupted_at_s: float | None = None
    rollback_s: float | None = None
    compute_lost_s: float = 0.0  # rollback + restart
    slowdown_s: float | None = None  # slowed iterations' excess over the fault-free mean
    failures_per_day: float = 0.0
    compute_lost_per_failure_s: float | None = None
    compute_lost_per_day_s: float | None = None
    compute_lost_day_share: float | None = None  # of a day's compute; > 1: no progress
    problems: tuple[str, ...] = ()


@dataclass(frozen=True)
class RunMetrics:
    schema: str = SCHEMA
    scenario: str = ""
    target: str = ""
    flow_control: str = ""
    verdict: str = "error"  # pass, fail, partial, incomplete, stalled, error
    verdict_reasons: tuple[str, ...] = ()  # why the verdict is not pass, one line each
    error: str | None = None
    partial: bool = False
    suspect: bool | None = None
    problems: tuple[str, ...] = ()
    # ---- frames (traffic/analysis.py)
    sent: int = 0
    received: int = 0
    lost: int = 0
    reordered: int = 0
    duplicates: int = 0
    transmissions: int = 0
    retransmitted: int = 0
    lost_in_fabric: int = 0
    unknown_frames: int = 0
    pause_frames: int = 0
    credit_frames: int = 0
    ack_frames: int = 0
    nak_frames: int = 0
    capture_drops: int = 0
    rate_kept: bool | None = None
    drops_by_reason: dict[str, int] | None = None
    unexplained_loss: int | None = None
    lost_on_failed_links: int | None = None
    lost_on_failed_links_by_link: dict[str, int] | None = None
    reconciliation: Reconciliation | None = None
    flows: dict[str, FlowMetrics] = field(default_factory=dict)
    # ---- the fabric and its SM
    topology: str | None = None
    routing: str | None = None
    reroute: str | None = None
    capacity: dict[str, Any] | None = None
    # how long each local switch's threads waited for a CPU during the traffic, and the
    # CPUs' steal (topologies/cpu_wait.py); a starved switch makes rate_kept false
    switch_cpu: dict[str, Any] | None = None
    crashed_switches: dict[str, int] | None = None
    sm_setup_s: float | None = None
    sm_timeline: tuple[dict[str, Any], ...] = ()
    deadlock_free_routing: bool | None = None
    deadlock_problem: str | None = None
    vls_used: int | None = None
    discovered_links: int | None = None  # switch-to-switch cables the SM's probes found
    link_rate_enforcement: tuple[str, ...] = ()  # how the switches enforce link rates
    # bmv2: each switch's hold loop, where held frames wait (topologies/hold_loop.py);
    # empty: held frames recirculate
    hold_loops: tuple[str, ...] = ()
    # ... and per switch what went round it: frames_in, frames_out, qdisc_drops
    hold_loop_frames: dict[str, dict[str, Any]] = field(default_factory=dict)
    run_prefix: str | None = None  # the run's interface/namespace name prefix (`fk3-`)
    # servers, placement per node, cross_server_links, tunnel (topologies/cluster.py)
    cluster: dict[str, Any] | None = None
    # ---- traffic and collectives
    traffic_start_ns: int | None = None
    stalled_after_s: float | None = None
    nics: dict[str, dict[str, Any]] = field(default_factory=dict)  # fabriclab.nic/1
    faults: tuple[FaultRecord, ...] = ()
    collectives: dict[str, CollectiveTime] | None = None
    cct_ms: float | None = None
    algbw: float | None = None
    busbw: float | None = None
    checks: dict[str, UnknownDlidCheck] = field(default_factory=dict)
    # ---- faults: stall spread, recovery, victims
    paused_ports: tuple[PortStall, ...] = ()
    held_at_end: tuple[HeldQueue, ...] = ()
    held_in_fabric: int = 0
    blocked_hosts: tuple[str, ...] = ()
    link_failures: tuple[LinkFailure, ...] = ()
    protected_flows: tuple[int, ...] = ()
    recovery: dict[str, RecoveryGap] | None = None
    delivery: dict[str, RecoveryGap] | None = None
    recovery_gap_ms: float | None = None
    recovery_gap_protected_ms: float | None = None
    delivery_gap_ms: float | None = None
    delivery_gap_protected_ms: float | None = None
    # the largest recovery gap per direction of the failed link (`a->b`), and that
    # link's detection (fault -> the later end's agent saw it) and switchover (longest
    # liveness write) from the agents' reports; rtt_ms: one round trip of the flows
    # crossing it when it failed (twice their largest mean one-way delay over the
    # 100 ms before)
    recovery_gap_by_direction: dict[str, float] | None = None
    detection_ms: float | None = None
    switchover_ms: float | None = None
    rtt_ms: float | None = None
    baseline_run: str | None = None
    victim_goodput: VictimGoodput | None = None
    victim_goodput_ratio: float | None = None
    # ---- a training job (scenario [training]), per fabric compared
    failure_gaps: tuple[FailureGap, ...] = ()
    training: dict[str, TrainingMetrics] | None = None
    compared_runs: dict[str, str] | None = None  # fabric -> its run directory
    # fabric -> its run's headline figures (fabriclab/compare.py COMPARED_FIGURES)
    compared: dict[str, dict[str, Any]] | None = None
    # partitions and QoS (fabriclab/qos_measure.py, fabriclab/qos_compare.py)
    qos: dict[str, Any] | None = None  # arbitration config, schedulers, class bandwidth
    checkpoint_share: float | None = None  # background classes' share of the ranks' sends
    cross_partition_delivered: int | None = None  # frames that reached another partition
    pkey_drops: int | None = None  # counted by the switches (drop reason `pkey`)
    solo_run: str | None = None  # the same [traffic] alone
    solo_cct_ms: float | None = None
    share_of_solo: float | None = None  # collective throughput against the solo run
    arbitration: dict[str, ArbitrationSetting] | None = None  # per compared QoS policy

    @property
    def ok(self) -> bool:
        return self.verdict == "pass"

    def to_json(self) -> dict[str, Any]:
        return _encode(self)

    @classmethod
    def from_json(cls, data: Any, origin: str = "metrics") -> RunMetrics:
        """Metrics from a loaded metrics.json of this or an older schema."""
        if not isinstance(data, dict):
            raise MetricsSchemaError(f"{origin}: expected a JSON object, found "
                                     f"{type(data).__name__}")
        # Runs that failed before their analysis wrote no schema: the oldest format.
        schema = data.get("schema", OLDER_SCHEMAS[0])
        if schema not in (SCHEMA, *OLDER_SCHEMAS):
            raise MetricsSchemaError(
                f"{origin}: schema {schema!r} is not one this version reads "
                f"({', '.join((SCHEMA, *OLDER_SCHEMAS))}); re-run the scenario")
        strict = schema == SCHEMA  # older files may carry keys since dropped
        try:
            metrics = _decode(cls, data, strict, origin)
        except (TypeError, ValueError, KeyError) as exc:
            raise MetricsSchemaError(f"{origin}: {exc}") from None
        return dataclasses.replace(metrics, schema=SCHEMA)

    @classmethod
    def read(cls, path: Path | str) -> RunMetrics:
        path = Path(path)
        try:
            data = json.loads(path.read_text())
        except FileNotFoundError:
            raise MetricsSchemaError(f"{path}: missing") from None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise MetricsSchemaError(f"{path}: could not be read ({exc})") from None
        return cls.from_json(data, str(path))

    def write(self, path: Path | str) -> Path:
        path = Path(path)
        tmp = path.with_suffix(path.suffix + ".tmp")
        tmp.write_text(json.dumps(self.to_json(), indent=2, sort_keys=True) + "\n")
        tmp.replace(path)
        return path


# JSON names that are Python keywords
_JSON_NAME = {"klass": "class"}


def _encode(value: Any) -> Any:
    if dataclasses.is_dataclass(value):
        return {_JSON_NAME.get(f.name, f.name): _encode(getattr(value, f.name))
                for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): _encode(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_encode(v) for v in value]
    return value


def _decode(cls: type, data: Any, strict: bool, where: str) -> Any:
    if not isinstance(data, dict):
        raise TypeError(f"{where}: expected an object for {cls.__name__}, found {data!r}")
    hints = typing.get_type_hints(cls)
    names = {_JSON_NAME.get(f.name, f.name): f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - set(names))
    if strict and unknown:
        raise KeyError(f"{where}: unknown field(s) {', '.join(unknown)} in {cls.__name__}")
    values = {attr: _value(hints[attr], data[key], strict, f"{where}.{key}")
              for key, attr in names.items() if key in data}
    return cls(**values)


def _value(kind: Any, data: Any, strict: bool, where: str) -> Any:
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if origin in (typing.Union, types.UnionType):
        if data is None and type(None) in args:
            return None
        (kind,) = [a for a in args if a is not type(None)]
        return _value(kind, data, strict, where)
    if dataclasses.is_dataclass(kind):
        return data if isinstance(data, kind) else _decode(kind, data, strict, where)
    if origin is tuple:
        if not isinstance(data, list | tuple):
            raise TypeError(f"{where}: expected a list, found {data!r}")
        return tuple(_value(args[0], v, strict, f"{where}[{i}]") for i, v in enumerate(data))
    if origin is dict:
        if not isinstance(data, dict):
            raise TypeError(f"{where}: expected an object, found {data!r}")
        return {str(k): _value(args[1], v, strict, f"{where}.{k}") for k, v in data.items()}
    if kind is Any:
        return data
    if kind is float and isinstance(data, int) and not isinstance(data, bool):
        return float(data)
    if not isinstance(data, kind) or (kind is int and isinstance(data, bool)):
        raise TypeError(f"{where}: expected {kind.__name__}, found {data!r}")
    return data
