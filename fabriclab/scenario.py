"""Scenarios: small declarative TOML files, validated with clear errors.

A scenario names a topology, a flow-control mode, a routing engine, the traffic
and the checks; every field has a documented default, and the runner writes the
scenario as run (all defaults resolved) into the result directory.
"""

from __future__ import annotations

import enum
import tomllib
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

SCENARIO_DIR = Path(__file__).resolve().parent.parent / "scenarios"


class ScenarioError(ValueError):
    """A scenario file that cannot be run as written."""


class FlowControl(enum.Enum):
    LOSSY = "lossy"
    PFC = "pfc"
    CREDIT = "credit"


@dataclass(frozen=True)
class LinkSpec:
    rate_pps: int = 2000  # emulated link rate, packets per second
    delay_us: int = 0  # one-way propagation delay
    buffer_pkts: int = 64  # egress queue depth


@dataclass(frozen=True)
class TrafficSpec:
    pattern: str = "stream"  # stream: one flow of numbered DATA frames src -> dst
    src: str = "h1"
    dst: str = "h2"
    frames: int = 300
    rate_pps: int = 500
    payload_bytes: int = 64


@dataclass(frozen=True)
class ChecksSpec:
    unknown_dlid_frames: int = 3  # frames sent to a DLID nobody has: must be dropped and counted


@dataclass(frozen=True)
class Scenario:
    name: str
    description: str = ""
    topology: str = "line:2"
    flow_control: FlowControl = FlowControl.LOSSY
    routing: str = "minhop"
    seed: int = 1
    duration_s: float = 30.0  # hard limit for the traffic phase
    link: LinkSpec = field(default_factory=LinkSpec)
    traffic: TrafficSpec = field(default_factory=TrafficSpec)
    checks: ChecksSpec = field(default_factory=ChecksSpec)

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["flow_control"] = self.flow_control.value
        return data

    def with_overrides(self, topology: str | None = None, flow_control: str | None = None
                       ) -> Scenario:
        changed = self
        if topology:
            changed = replace(changed, topology=topology)
        if flow_control:
            changed = replace(changed, flow_control=_enum(FlowControl, flow_control, "flow_control"))
        return changed


PATTERNS = ("stream",)
ROUTING_ENGINES = ("minhop",)


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
        expected = type(getattr(cls(), key)) if cls is not Scenario else None
        if expected is not None and not isinstance(value, expected) and not (
                expected is float and isinstance(value, int)):
            raise ScenarioError(f"{where}.{key}: expected {expected.__name__}, "
                                f"got {value!r}")
        if isinstance(value, int | float) and not isinstance(value, bool) and value < 0:
            raise ScenarioError(f"{where}.{key}: must not be negative, got {value}")
        values[key] = value
    return cls(**values)


def parse(data: dict[str, Any], origin: str) -> Scenario:
    """Validate a scenario given as parsed TOML; `origin` names it in errors."""
    known = {f.name for f in fields(Scenario)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ScenarioError(f"{origin}: unknown field(s) {', '.join(unknown)}; "
                            f"known: {', '.join(sorted(known))}")
    if not isinstance(data.get("name"), str) or not data["name"]:
        raise ScenarioError(f"{origin}: `name` (a non-empty string) is required")
    values: dict[str, Any] = dict(data)
    values["flow_control"] = _enum(FlowControl, data.get("flow_control", "lossy"),
                                   f"{origin}: flow_control")
    for key in ("description", "topology", "routing"):
        if key in data and not isinstance(data[key], str):
            raise ScenarioError(f"{origin}: {key}: expected a string, got {data[key]!r}")
    for key in ("seed", "duration_s"):
        if key in data and (not isinstance(data[key], int | float) or data[key] < 0):
            raise ScenarioError(f"{origin}: {key}: expected a non-negative number")
    values["link"] = _section(LinkSpec, data.get("link", {}), f"{origin}: [link]")
    values["traffic"] = _section(TrafficSpec, data.get("traffic", {}), f"{origin}: [traffic]")
    values["checks"] = _section(ChecksSpec, data.get("checks", {}), f"{origin}: [checks]")
    scenario = Scenario(**values)
    if scenario.traffic.pattern not in PATTERNS:
        raise ScenarioError(f"{origin}: [traffic].pattern {scenario.traffic.pattern!r} is not "
                            f"one of {', '.join(PATTERNS)}")
    if scenario.routing not in ROUTING_ENGINES:
        raise ScenarioError(f"{origin}: routing {scenario.routing!r} is not one of "
                            f"{', '.join(ROUTING_ENGINES)}")
    if scenario.traffic.src == scenario.traffic.dst:
        raise ScenarioError(f"{origin}: [traffic] src and dst are the same host")
    return scenario


def load(name_or_path: str) -> Scenario:
    """A scenario by name (a file in scenarios/) or by path."""
    path = Path(name_or_path)
    if not path.suffix:
        path = SCENARIO_DIR / f"{name_or_path}.toml"
    if not path.exists():
        raise ScenarioError(f"unknown scenario {name_or_path!r}: known are "
                            f"{', '.join(available()) or '(none)'}")
    try:
        data = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise ScenarioError(f"{path}: not valid TOML: {exc}") from None
    return parse(data, str(path))


def available() -> list[str]:
    return sorted(p.stem for p in SCENARIO_DIR.glob("*.toml"))
