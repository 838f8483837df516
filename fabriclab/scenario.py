"""Scenarios: small declarative TOML files, validated with clear errors.

A scenario names a topology, a flow-control mode, a routing engine, the traffic
and the checks; every field has a documented default, and the runner writes the
scenario as run (all defaults resolved) into the result directory.
"""

from __future__ import annotations

import enum
import math
import tomllib
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from traffic.flow_control import (
    CREDIT_BUFFER,
    CREDIT_COALESCE,
    PFC_HEADROOM,
    PFC_XOFF,
    PFC_XON,
    FlowControl,
)
from traffic.frames import DATA_HEADER_LEN, ETHERNET_MTU
from traffic.nic_config import CREDIT_WINDOW, NicConfig

SCENARIO_DIR = Path(__file__).resolve().parent.parent / "scenarios"
# A DATA frame carries at most this much payload within the hosts' MTU (a larger one
# never leaves the sender's NIC).
MAX_PAYLOAD_BYTES = ETHERNET_MTU + 14 - DATA_HEADER_LEN


class ScenarioError(ValueError):
    """A scenario file that cannot be run as written."""


@dataclass(frozen=True)
class LinkSpec:
    rate_pps: int = 2000  # emulated link rate, packets per second
    delay_us: int = 0  # one-way propagation delay
    buffer_pkts: int = 64  # egress queue depth


@dataclass(frozen=True)
class TrafficSpec:
    pattern: str = "stream"  # see PATTERNS
    src: str = "h1"  # stream: the sender
    dst: str = "h2"  # stream: the receiver; incast: the root
    hosts: tuple[str, ...] = ()  # collectives: the ranks in order; empty = every host
    frames: int = 300  # stream: numbered DATA frames, PSN 0..frames-1
    rate_pps: int = 500  # each sender's rate
    payload_bytes: int = 64
    message_bytes: int = 65536  # collectives: the message each rank contributes
    repetitions: int = 1  # collectives: how many times the collective runs
    transport: str = "ud"  # ud: unacknowledged; rc: ACK/NAK + go-back-N, as InfiniBand RC
    rc_timeout_ms: float = 100.0  # RC: the retransmission timeout before an RTT was measured
    rc_rto: str = "adaptive"  # RC: adaptive (SRTT + 4 RTTVAR) or fixed (rc_timeout_ms)
    rc_rto_min_ms: float = 10.0  # RC: the adaptive timeout's floor
    rc_retry_limit: int = 7  # RC: timeouts in a row before the QP fails (IB retry_cnt)
    rc_paused_timeouts: str = "defer"  # RC: a timeout while our class is held: defer|retransmit
    rc_timeout_resend: str = "probe"  # RC: a timeout resends the oldest frame, or the window
    rc_retransmission: str = "go-back-n"  # RC: after a NAK, go-back-n (IB RC) or selective
    rc_window_control: str = "fixed"  # RC: rc_window (128) always, or "delay": follows the RTT
    rc_window: int = 128  # RC: unacknowledged frames per flow at most (what a go-back resends)


@dataclass(frozen=True)
class PfcSpec:
    """802.1Qbb watermarks, in packets of one ingress port and priority."""

    xoff: int = PFC_XOFF  # occupancy at which a pause is sent upstream
    xon: int = PFC_XON  # occupancy below which a resume (quanta 0) is sent
    headroom: int = PFC_HEADROOM  # buffer above xoff for frames in flight; beyond it frames drop
    watchdog_detect_us: int = 0  # a queue paused this long stops honouring pauses; 0 = off
    watchdog_restore_us: int = 0  # ... for this long


@dataclass(frozen=True)
class CreditSpec:
    """InfiniBand-style credit flow control; one credit = one packet here."""

    buffer_pkts: int = CREDIT_BUFFER  # receive buffer per input port and VL, advertised
    coalesce: int = CREDIT_COALESCE  # return credits every this many drained packets
    hoq_lifetime_us: int = 0  # discard packets held longer than this; 0 = never


@dataclass(frozen=True)
class FaultSpec:
    at_s: float = 0.0  # seconds after traffic starts
    kind: str = ""  # see FAULT_KINDS
    target: str = ""  # "s1-s2", "h3", "s2", or relative: "rank:0/uplink:1" (fabriclab/plan.py)


@dataclass(frozen=True)
class SweepSpec:
    """Run the scenario once per value of one parameter, into one table."""

    parameter: str = ""  # dotted path, e.g. "pfc.xoff", "link.rate_pps", "topology",
    # or a section ("pfc") whose values are tables setting several fields at once
    values: tuple = ()


@dataclass(frozen=True)
class TrainingSpec:
    """A training job (traffic/training.py): `iterations` x (compute, then the AllReduce of
    [traffic] message_bytes of gradients); 0 iterations = no training job."""

    iterations: int = 0  # replaces [traffic] repetitions
    compute_ms: float = 50.0  # per iteration, before its AllReduce
    checkpoint_interval_s: float = 10.0  # an interrupted job rolls back to the last one
    restart_s: float = 60.0  # ... and takes this long to restart
    failures_per_day: float = 0.0  # for the cost per day; 0 = the [flaps] rate of the run


@dataclass(frozen=True)
class FlapSpec:
    """A link that goes down and comes back at a steady rate (expanded into [[faults]])."""

    target: str = ""  # a link, as [[faults]] targets: "s1-s3", "rank:0/uplink:1"
    first_s: float = 0.5  # the first failure, seconds after traffic starts
    every_s: float = 2.0  # one failure every this many seconds
    down_s: float = 0.5  # each lasts this long
    count: int = 0  # failures; 0 = no flaps

    def faults(self) -> tuple[FaultSpec, ...]:
        out = []
        for k in range(self.count):
            at = round(self.first_s + k * self.every_s, 6)
            out += [FaultSpec(at, "link_down", self.target),
                    FaultSpec(round(at + self.down_s, 6), "link_up", self.target)]
        return tuple(out)


@dataclass(frozen=True)
class CompareSpec:
    """One fabric a comparing scenario runs on (the rest of the scenario is shared)."""

    name: str = ""  # e.g. "ib-like", "roce-like": the key in metrics.json's `training`
    flow_control: str = "credit"
    reroute: str = "fast"  # as Scenario.reroute: fast, local or global
    convergence_delay_s: float = 0.0  # see Scenario.convergence_delay_s
@dataclass(frozen=True)
class QosSpec:
    """Partitions and QoS (docs/run.md "Partitions and QoS"); files relative to the scenario
    file's folder where they are there, else to scenarios/."""

    policy: str = ""  # QoS policy file (SL -> VL, VL arbitration, traffic classes); "" = none
    compare: tuple[str, ...] = ()  # one run per QoS policy file, each against the solo run
    traffic_class: str = "gradient"  # the class of [traffic]
    partitions: str = ""  # OpenSM partitions.conf; "" = no partitions
    solo: bool = False  # also run [traffic] alone (no background): shares of its solo run


@dataclass(frozen=True)
class BackgroundSpec:
    """[[background]]: traffic beside [traffic], in its own class (checkpoint writes to
    storage hosts, or a job sending into another job's partition)."""

    traffic_class: str = "checkpoint"
    src: tuple[str, ...] = ()  # senders; empty = the ranks
    dst: tuple[str, ...] = ()  # receivers, taken in turn by the senders (required)
    frames: int = 100  # per sender and burst
    bursts: int = 1
    interval_s: float = 0.0  # between the starts of two bursts
    start_s: float = 0.0  # first burst, after traffic starts
    payload_bytes: int = 0  # 0 = [traffic]'s


@dataclass(frozen=True)
class ChecksSpec:
    unknown_dlid_frames: int = 3  # frames sent to a DLID nobody has: must be dropped and counted


@dataclass(frozen=True)
class ClusterSpec:
    """Where the fabric runs (docs/cluster.md): one machine, or spread over servers."""

    servers: str = ""  # "" = this machine; `ns:3` = 3 namespace servers; `host1,host2`
    # (real servers over SSH); `ssh:ns:3` = namespace servers driven like real ones
    ssh_config: str = ""  # real servers: an ssh_config file (users, keys); "" = ~/.ssh
    placement: str = "group"  # block, random (the scenario's seed) or group


@dataclass(frozen=True)
class Scenario:
    name: str
    description: str = ""
    topology: str = "line:2"
    flow_control: FlowControl = FlowControl.LOSSY
    routing: str = "minhop"
    # fast: backup ports + fault notification upstream in the data plane, then the SM's
    # global reroute; local: backup ports only (no notification), then the SM; global: SM only
    reroute: str = "fast"
    # The SM's global reroute starts this long after a port event: the time distributed
    # routing (BGP in a RoCE fabric) takes to converge, the RoCE/BGP stand-in. 0 = the SM's
    # own speed (an InfiniBand SM reacting to a trap).
    convergence_delay_s: float = 0.0
    vl_layering: bool = True  # break cyclic channel dependencies with VLs (false: leave them)
    baseline: bool = False  # also run without faults first: victim goodput against it
    seed: int = 1
    duration_s: float = 30.0  # hard limit for the traffic phase
    stall_timeout_s: float = 3.0  # nothing sent or received this long: stop, verdict stalled
    link: LinkSpec = field(default_factory=LinkSpec)
    traffic: TrafficSpec = field(default_factory=TrafficSpec)
    pfc: PfcSpec = field(default_factory=PfcSpec)
    credit: CreditSpec = field(default_factory=CreditSpec)
    faults: tuple[FaultSpec, ...] = ()
    sweep: SweepSpec = field(default_factory=SweepSpec)
    checks: ChecksSpec = field(default_factory=ChecksSpec)
    cluster: ClusterSpec = field(default_factory=ClusterSpec)
    training: TrainingSpec = field(default_factory=TrainingSpec)
    flaps: FlapSpec = field(default_factory=FlapSpec)  # its faults are in `faults` too
    compare: tuple[CompareSpec, ...] = ()  # run once per fabric (fabriclab/compare.py)
    qos: QosSpec = field(default_factory=QosSpec)
    background: tuple[BackgroundSpec, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["flow_control"] = self.flow_control.value
        return data

    def with_overrides(self, topology: str | None = None, flow_control: str | None = None,
                       servers: str | None = None, placement: str | None = None
                       ) -> Scenario:
        changed = self
        if servers is not None or placement is not None:
            cluster = replace(self.cluster, servers=self.cluster.servers if servers is None
                              else servers, placement=placement or self.cluster.placement)
            _check_cluster(cluster, "command line")
            changed = replace(changed, cluster=cluster)
        if topology:
            changed = replace(changed, topology=topology)
        if flow_control:
            changed = replace(changed, flow_control=_enum(FlowControl, flow_control, "flow_control"))
            _check_ranges(changed, f"{self.name} with --fc {flow_control}")
        return changed


# Arrays whose items are not host or file names: a sweep's values (numbers, strings, tables)
_MIXED_ARRAYS = {(SweepSpec, "values")}
PATTERNS = ("stream", "incast", "permutation", "allreduce-ring", "allreduce-hd", "alltoall")
ROUTING_ENGINES = ("minhop", "updn", "ftree")
TRANSPORTS = ("ud", "rc")
FAULT_KINDS = ("link_down", "link_up", "stall", "unstall", "pause_storm", "credit_loss",
               "switch_kill", "switch_restart")


def _enum(kind: type[enum.Enum], value: Any, where: str) -> enum.Enum:
    try:
        return kind(value)
    except ValueError:
        choices = ", ".join(m.value for m in kind)
        raise ScenarioError(f"{where}: {value!r} is not one of {choices}") from None


def _section(cls, data: Any, where: str):
    if not isinstance(data, dict):
        raise ScenarioError(f"{where}: expected a table, got {type(data).__name__}")
    known = {f.name: f for f in fields(cls)}
    unknown = sorted(set(data) - set(known))
    if unknown:
        raise ScenarioError(f"{where}: unknown field(s) {', '.join(unknown)}; "
                            f"known: {', '.join(known)}")
    values = {}
    for key, value in data.items():
        expected = type(getattr(cls(), key))
        if expected is tuple and isinstance(value, list):
            value = tuple(value)
        number = expected in (int, float)  # TOML's true/false are no numbers (bool is an int)
        if (not isinstance(value, expected) or (number and isinstance(value, bool))) and not (
                expected is float and isinstance(value, int) and not isinstance(value, bool)):
            what = "an array" if expected is tuple else expected.__name__
            got = str(value).lower() if isinstance(value, bool) else repr(value)
            raise ScenarioError(f"{where}.{key}: expected {what}, got {got}")
        if expected is tuple and (cls, key) not in _MIXED_ARRAYS and not all(
                isinstance(v, str) for v in value):
            raise ScenarioError(f"{where}.{key}: expected an array of strings, "
                                f"got {list(value)!r}")
        _check_number(value, f"{where}.{key}")
        values[key] = value
    return cls(**values)


def _check_number(value: Any, where: str) -> None:
    """A number must be finite and not negative (TOML allows nan and inf)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        if not math.isfinite(value):
            raise ScenarioError(f"{where}: expected a finite number, got {value}")
        if value < 0:
            raise ScenarioError(f"{where}: must not be negative, got {value}")


def _check_dir_name(name: str, where: str) -> None:
    """A scenario's (or compared fabric's) name is part of its result directory's."""
    if "/" in name or "\0" in name or name in (".", ".."):
        raise ScenarioError(f"{where} {name!r} names the result directory: it cannot "
                            "contain '/' or be '.' or '..'")


def _check_cluster(cluster: ClusterSpec, where: str) -> None:
    from topologies.placement import PLACEMENTS
    from topologies.servers import parse_servers

    if cluster.servers:
        try:
            parse_servers(cluster.servers)
        except ValueError as exc:
            raise ScenarioError(f"{where}: {exc}") from None
    if cluster.placement not in PLACEMENTS:
        raise ScenarioError(f"{where}: placement {cluster.placement!r} is not one of "
                            f"{', '.join(PLACEMENTS)}")


def parse(data: dict[str, Any], origin: str) -> Scenario:
    """Validate a scenario given as parsed TOML; `origin` names it in errors."""
    known = {f.name for f in fields(Scenario)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ScenarioError(f"{origin}: unknown field(s) {', '.join(unknown)}; "
                            f"known: {', '.join(sorted(known))}")
    if not isinstance(data.get("name"), str) or not data["name"]:
        raise ScenarioError(f"{origin}: `name` (a non-empty string) is required")
    _check_dir_name(data["name"], f"{origin}: `name`")
    values: dict[str, Any] = dict(data)
    values["flow_control"] = _enum(FlowControl, data.get("flow_control", "lossy"),
                                   f"{origin}: flow_control")
    for key in ("description", "topology", "routing", "reroute"):
        if key in data and not isinstance(data[key], str):
            raise ScenarioError(f"{origin}: {key}: expected a string, got {data[key]!r}")
    for key in ("vl_layering", "baseline"):
        if key in data and not isinstance(data[key], bool):
            raise ScenarioError(f"{origin}: {key}: expected true or false, got {data[key]!r}")
    for key in ("seed", "duration_s", "stall_timeout_s", "convergence_delay_s"):
        if key in data and (not isinstance(data[key], int | float)
                            or isinstance(data[key], bool) or data[key] < 0):
            raise ScenarioError(f"{origin}: {key}: expected a non-negative number")
        if key in data:
            _check_number(data[key], f"{origin}: {key}")
    values.update(_sections(data, origin))
    values["background"] = _background(data.get("background", []), origin)
    faults = data.get("faults", [])
    if not isinstance(faults, list | tuple):
        raise ScenarioError(f"{origin}: faults: expected an array of tables ([[faults]])")
    explicit = tuple(_section(FaultSpec, f, f"{origin}: [[faults]] #{i + 1}")
                     for i, f in enumerate(faults))
    # The scenario as run lists the flaps' faults already: they are not added twice.
    values["faults"] = explicit + tuple(f for f in values["flaps"].faults()
                                        if f not in explicit)
    values["compare"] = _compare(data.get("compare", []), origin)
    scenario = Scenario(**values)
    for i, fault in enumerate(scenario.faults):
        if fault.kind not in FAULT_KINDS:
            raise ScenarioError(f"{origin}: [[faults]] #{i + 1}: kind {fault.kind!r} is not one "
                                f"of {', '.join(FAULT_KINDS)}")
        if not fault.target:
            raise ScenarioError(f"{origin}: [[faults]] #{i + 1}: `target` is required")
    if scenario.pfc.xon > scenario.pfc.xoff:
        raise ScenarioError(f"{origin}: [pfc] xon ({scenario.pfc.xon}) must not exceed xoff "
                            f"({scenario.pfc.xoff})")
    if scenario.sweep.parameter or scenario.sweep.values:
        sweep_points(data, origin)  # every point must be a valid scenario on its own
    _check_choices(scenario, _CHOICES_BEFORE_WINDOW, origin)
    if not 16 <= scenario.traffic.rc_window <= 65536:  # the NIC ACKs every 16 frames
        raise ScenarioError(f"{origin}: [traffic].rc_window {scenario.traffic.rc_window} is "
                            "not between 16 (the NIC's ACK interval) and 65536 frames")
    _check_choices(scenario, _CHOICES_AFTER_WINDOW, origin)
    if scenario.traffic.pattern == "stream" and scenario.traffic.src == scenario.traffic.dst:
        raise ScenarioError(f"{origin}: [traffic] src and dst are the same host")
    _check_training(scenario, origin)
    _check_ranges(scenario, origin)
    return scenario


# (section or None for the top level, field, allowed values), checked in this order
_CHOICES_BEFORE_WINDOW = (
    ("traffic", "pattern", PATTERNS), (None, "routing", ROUTING_ENGINES),
    ("traffic", "rc_rto", ("adaptive", "fixed")),
    ("traffic", "rc_paused_timeouts", ("defer", "retransmit")),
    ("traffic", "rc_timeout_resend", ("probe", "window")),
    ("traffic", "rc_window_control", ("delay", "fixed")))
_CHOICES_AFTER_WINDOW = (
    ("traffic", "rc_retransmission", ("go-back-n", "selective")),
    ("traffic", "transport", TRANSPORTS), (None, "reroute", ("fast", "local", "global")))


def _check_choices(scenario: Scenario, choices, origin: str) -> None:
    for section, name, allowed in choices:
        value = getattr(getattr(scenario, section) if section else scenario, name)
        if value not in allowed:
            label = f"[{section}].{name}" if section else name
            raise ScenarioError(f"{origin}: {label} {value!r} is not one of "
                                f"{', '.join(allowed)}")


def _sections(data: dict[str, Any], origin: str) -> dict[str, Any]:
    """The scenario's [tables], each checked against its spec."""
    out = {}
    for key, spec in (("link", LinkSpec), ("traffic", TrafficSpec), ("checks", ChecksSpec),
                      ("pfc", PfcSpec), ("credit", CreditSpec), ("sweep", SweepSpec),
                      ("cluster", ClusterSpec), ("training", TrainingSpec),
                      ("flaps", FlapSpec), ("qos", QosSpec)):
        out[key] = _section(spec, data.get(key, {}), f"{origin}: [{key}]")
        if key == "cluster":
            _check_cluster(out["cluster"], f"{origin}: [cluster]")
    if out["flaps"].count and not out["flaps"].target:
        raise ScenarioError(f"{origin}: [flaps] count = {out['flaps'].count} needs a "
                            "`target`")
    return out


def _background(background: Any, origin: str) -> tuple:
    """[[background]]: traffic beside the measured one, each with its receivers."""
    if not isinstance(background, list | tuple):
        raise ScenarioError(f"{origin}: background: expected an array of tables "
                            "([[background]])")
    out = tuple(_section(BackgroundSpec, b, f"{origin}: [[background]] #{i + 1}")
                for i, b in enumerate(background))
    for i, b in enumerate(out):
        if not b.dst:
            raise ScenarioError(f"{origin}: [[background]] #{i + 1}: `dst` (receiving "
                                "hosts) is required")
    return out


def _compare(entries: Any, origin: str) -> tuple[CompareSpec, ...]:
    if not isinstance(entries, list | tuple):
        raise ScenarioError(f"{origin}: compare: expected an array of tables ([[compare]])")
    out = []
    for i, entry in enumerate(entries):
        where = f"{origin}: [[compare]] #{i + 1}"
        spec = _section(CompareSpec, entry, where)
        if not spec.name:
            raise ScenarioError(f"{where}: `name` is required")
        _check_dir_name(spec.name, f"{where}: `name`")
        _enum(FlowControl, spec.flow_control, f"{where}: flow_control")
        if spec.reroute not in ("fast", "local", "global"):
            raise ScenarioError(f"{where}: reroute {spec.reroute!r} is not one of fast, local, "
                                "global")
        out.append(spec)
    names = [c.name for c in out]
    if len(set(names)) != len(names):
        raise ScenarioError(f"{origin}: [[compare]] names must differ, got {', '.join(names)}")
    return tuple(out)


# (section, field, least value): a number below it leaves nothing to send or measure, or
# makes the NIC emulator (traffic/nic_config.py) refuse to start, after the fabric is up.
_LEAST = (("link", "rate_pps", 1), ("link", "buffer_pkts", 1), ("traffic", "rate_pps", 1),
          ("credit", "buffer_pkts", 1), ("credit", "coalesce", 1),
          ("traffic", "rc_retry_limit", 1))
_LEAST_COLLECTIVE = (("traffic", "message_bytes", 1), ("traffic", "repetitions", 1),
                     ("traffic", "payload_bytes", 1))
_POSITIVE = ((None, "duration_s"), ("traffic", "rc_timeout_ms"), ("traffic", "rc_rto_min_ms"))


def _check_ranges(scenario: Scenario, origin: str) -> None:
    """Numbers the types allow but a run cannot use: one line naming the field."""
    t = scenario.traffic
    least = _LEAST + (_LEAST_COLLECTIVE if t.pattern != "stream" else
                      (("traffic", "frames", 1),))
    for section, name, low in least:
        if getattr(getattr(scenario, section), name) < low:
            raise ScenarioError(f"{origin}: [{section}].{name} must be at least {low}, got "
                                f"{getattr(getattr(scenario, section), name)}")
    for section, name in _POSITIVE:
        value = getattr(getattr(scenario, section) if section else scenario, name)
        if value <= 0:
            label = f"[{section}].{name}" if section else name
            raise ScenarioError(f"{origin}: {label} must be greater than 0, got {value}")
    for i, b in enumerate(scenario.background):
        if b.frames < 1:
            raise ScenarioError(f"{origin}: [[background]] #{i + 1}.frames must be at least "
                                f"1, got {b.frames}")
    payloads = [("[traffic].payload_bytes", t.payload_bytes)] + [
        (f"[[background]] #{i + 1}.payload_bytes", b.payload_bytes)
        for i, b in enumerate(scenario.background)]
    for label, payload in payloads:
        if payload > MAX_PAYLOAD_BYTES:
            raise ScenarioError(f"{origin}: {label} {payload} does not fit a frame: at most "
                                f"{MAX_PAYLOAD_BYTES} bytes (MTU {ETHERNET_MTU} less the "
                                f"{DATA_HEADER_LEN - 14}-byte fabric headers)")
    if t.rc_rto_min_ms > NicConfig.rc_rto_max_ms:
        raise ScenarioError(f"{origin}: [traffic].rc_rto_min_ms {t.rc_rto_min_ms} exceeds the "
                            f"NIC's adaptive timeout ceiling, {NicConfig.rc_rto_max_ms} ms")
    if scenario.credit.buffer_pkts > CREDIT_WINDOW:
        raise ScenarioError(f"{origin}: [credit].buffer_pkts {scenario.credit.buffer_pkts} "
                            f"exceeds InfiniBand's credit window, {CREDIT_WINDOW}")
    rate = min(t.rate_pps, scenario.link.rate_pps) if t.pattern == "stream" \
        else scenario.link.rate_pps  # what the NICs send at (fabriclab/traffic_run.py)
    if scenario.stall_timeout_s and 1 / rate >= scenario.stall_timeout_s:
        raise ScenarioError(f"{origin}: stall_timeout_s {scenario.stall_timeout_s:g} s is not "
                            f"longer than one frame time at {rate} frames/s: the run would "
                            "stop the traffic as stalled between two frames")
    modes = {scenario.flow_control.value} | {c.flow_control for c in scenario.compare}
    pfc, buffer = scenario.pfc, scenario.link.buffer_pkts
    if "pfc" in modes and not pfc.xon < pfc.xoff <= buffer:
        raise ScenarioError(f"{origin}: PFC needs [pfc] xon < xoff <= [link] buffer_pkts "
                            f"(a host's receive buffer), got xon={pfc.xon} xoff={pfc.xoff} "
                            f"buffer_pkts={buffer}")


def _check_training(scenario: Scenario, origin: str) -> None:
    if scenario.flaps.count and scenario.flaps.down_s >= scenario.flaps.every_s:
        raise ScenarioError(f"{origin}: [flaps] down_s ({scenario.flaps.down_s}) must be "
                            f"shorter than every_s ({scenario.flaps.every_s})")
    if scenario.training.iterations:
        if not scenario.traffic.pattern.startswith("allreduce"):
            raise ScenarioError(f"{origin}: [training] needs an AllReduce [traffic] pattern "
                                f"(allreduce-ring, allreduce-hd), got "
                                f"{scenario.traffic.pattern!r}")
        if scenario.traffic.transport != "rc":
            raise ScenarioError(f"{origin}: [training] needs [traffic] transport = \"rc\" "
                                "(an interruption is a QP exhausting its retry limit)")
        compute_s, stall_s = scenario.training.compute_ms / 1e3, scenario.stall_timeout_s
        if stall_s and compute_s >= stall_s:  # nothing moves while the ranks compute
            raise ScenarioError(f"{origin}: [training] compute_ms {scenario.training.compute_ms:g}"
                                f" is not shorter than stall_timeout_s {stall_s:g} s: no frame "
                                "moves while the ranks compute, so the run would stop the job "
                                "as stalled; raise stall_timeout_s (0: no stall detection)")


def variant(scenario: Scenario, spec: CompareSpec) -> Scenario:
    """The scenario on one of the fabrics it compares."""
    return replace(scenario, name=f"{scenario.name}-{spec.name}",
                   flow_control=FlowControl(spec.flow_control), reroute=spec.reroute,
                   convergence_delay_s=spec.convergence_delay_s, compare=())


def sweep_points(data: dict[str, Any], origin: str,
                 folder: Path | None = None) -> list[tuple[str, Scenario]]:
    """One validated scenario per sweep value, labelled `parameter=value`; files a point
    names (a swept `qos.policy`, a `netfile:` topology) are looked for in `folder` first."""
    def beside(point: dict[str, Any]) -> dict[str, Any]:
        return point if folder is None else _files_beside(point, folder)

    sweep = _section(SweepSpec, data.get("sweep", {}), f"{origin}: [sweep]")
    parameter, values = sweep.parameter, sweep.values
    if values and not parameter:
        raise ScenarioError(f"{origin}: [sweep] has values but no `parameter`")
    if parameter and not values:
        raise ScenarioError(f"{origin}: [sweep] parameter {parameter!r} has no values")
    if not parameter:
        return [("", parse(beside(data), origin))]
    if data.get("compare"):  # a sweep point runs one fabric: the comparison would be lost
        raise ScenarioError(f"{origin}: [sweep] and [[compare]] cannot be combined; sweep "
                            "`flow_control` or `reroute` instead, or compare without a sweep")
    points = []
    for value in values:
        point = {k: (dict(v) if isinstance(v, dict) else v) for k, v in data.items()
                 if k != "sweep"}
        *sections, leaf = parameter.split(".")
        target = point
        for section in sections:
            if not isinstance(target.get(section, {}), dict):
                raise ScenarioError(f"{origin}: [sweep] parameter {parameter!r}: "
                                    f"{section!r} is not a section")
            target = target.setdefault(section, {})
        target[leaf] = {**target.get(leaf, {}), **value} if isinstance(value, dict) else value
        label = (f"{parameter}: " + ",".join(f"{k}={v}" for k, v in value.items())
                 if isinstance(value, dict) else f"{parameter}={value}")
        points.append((label, parse(beside(point), f"{origin} ({label})")))
    return points


_STREAM_ONLY = ("src", "frames")
_COLLECTIVE_ONLY = ("hosts", "message_bytes", "repetitions")


def ignored_fields(data: dict[str, Any]) -> list[str]:
    """[traffic] fields the file sets that its pattern and transport do not use: the run
    goes on without them, and the user is told (a `hosts` list on a stream is no error, but
    it is not what that user meant)."""
    t = data.get("traffic")
    if not isinstance(t, dict):
        return []
    pattern, transport = t.get("pattern", "stream"), t.get("transport", "ud")
    if pattern not in PATTERNS:
        return []  # refused elsewhere
    unused = [*(_COLLECTIVE_ONLY if pattern == "stream" else _STREAM_ONLY),
              *(() if pattern in ("stream", "incast") else ("dst",))]
    notes = [f"[traffic] {k} does not apply to pattern {pattern}: ignored"
             for k in unused if k in t]
    if transport != "rc":
        rc = [k for k in t if k.startswith("rc_")]
        if rc:
            notes.append(f"[traffic] {', '.join(rc)} appl{'y' if len(rc) > 1 else 'ies'} "
                         f"only to transport \"rc\" (this one is {transport!r}): ignored")
    return notes


def load_notes(name_or_path: str) -> list[str]:
    """What `ignored_fields` says of the scenario file, and of each point of its sweep."""
    data = _read(_path(name_or_path))
    sweep = data.get("sweep")
    parameter = sweep.get("parameter") if isinstance(sweep, dict) else None
    values = sweep.get("values") if isinstance(sweep, dict) else None
    if not (isinstance(parameter, str) and parameter.split(".")[0] == "traffic"
            and isinstance(values, list) and isinstance(data.get("traffic", {}), dict)):
        return ignored_fields(data)
    notes: list[str] = []
    for value in values:  # a sweep over [traffic] runs its points, never the file as is
        if parameter == "traffic" and isinstance(value, dict):
            changed = value
        elif parameter != "traffic":
            changed = {parameter.split(".", 1)[1]: value}
        else:
            continue
        point = {**data, "traffic": {**data.get("traffic", {}), **changed}}
        notes += [n for n in ignored_fields(point) if n not in notes]
    return notes


def load_points(name_or_path: str) -> list[tuple[str, Scenario]]:
    """The scenario's sweep points (one unlabelled point when it has no sweep)."""
    path = _path(name_or_path)
    return sweep_points(_read(path), str(path), path.parent)


def _files_beside(data: dict[str, Any], folder: Path) -> dict[str, Any]:
    """Files a scenario names relative to its folder where they are there: a scenario kept
    outside scenarios/ may bring its own [qos] files (else relative to scenarios/) and
    `netfile:` topology (else relative to the working directory)."""
    if folder.resolve() == SCENARIO_DIR:
        return data

    def beside(name: Any) -> Any:
        if not isinstance(name, str) or not name or Path(name).is_absolute():
            return name
        return str((folder / name).resolve()) if (folder / name).is_file() else name

    data = dict(data)
    topology = data.get("topology")
    if isinstance(topology, str) and topology.startswith("netfile:"):
        data["topology"] = "netfile:" + beside(topology.removeprefix("netfile:"))
    qos = data.get("qos")
    if isinstance(qos, dict):
        qos = {k: beside(v) if k in ("policy", "partitions") else v for k, v in qos.items()}
        if isinstance(qos.get("compare"), list):
            qos["compare"] = [beside(name) for name in qos["compare"]]
        data["qos"] = qos
    return data


def _path(name_or_path: str) -> Path:
    path = Path(name_or_path)
    if not path.suffix:
        path = SCENARIO_DIR / f"{name_or_path}.toml"
    if not path.exists():
        if "/" in name_or_path or name_or_path.endswith(".toml"):
            raise ScenarioError(f"{name_or_path}: no such scenario file")
        raise ScenarioError(f"unknown scenario {name_or_path!r}: known are "
                            f"{', '.join(available()) or '(none)'}")
    return path


def _read(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise ScenarioError(f"{path}: not valid TOML: {exc}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ScenarioError(f"{path}: cannot be read: {exc}") from None


def load(name_or_path: str) -> Scenario:
    """A scenario by name (a file in scenarios/) or by path."""
    path = _path(name_or_path)
    return parse(_files_beside(_read(path), path.parent), str(path))


def available() -> list[str]:
    return sorted(p.stem for p in SCENARIO_DIR.glob("*.toml"))
