"""The report's document model (tables, figures, notes in sections), a run's parsed
inputs, and the formatting helpers every section builder shares (traffic/report.py and
the report_* modules)."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402 - the backend must be chosen first

from traffic.metrics import MetricsSchemaError, RunMetrics  # noqa: E402


class ReportInputError(Exception):
    """An input file of a run is missing or cannot be read; the message says which and why."""


# --------------------------------------------------------------------------- document model


@dataclass(frozen=True)
class Table:
    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class Figure:
    name: str
    png: bytes
    caption: str


@dataclass(frozen=True)
class Note:
    """A line in a section: text, or why the section's figure is missing."""

    text: str


@dataclass
class Section:
    title: str
    blocks: list[Table | Figure | Note] = field(default_factory=list)


# --------------------------------------------------------------------------- inputs


@dataclass
class RunFiles:
    """The parsed inputs of one run dir; None (and a reason) where one could not be read."""

    run_dir: Path
    metrics: RunMetrics | None = None
    scenario: dict | None = None
    topology: dict | None = None
    telemetry: dict | None = None
    why: dict[str, str] = field(default_factory=dict)

    def need(self, name: str):
        value = getattr(self, name)
        if value is None:
            raise ReportInputError(self.why.get(name, f"no {name}.json"))
        return value


def read_json(path: Path) -> dict:
    if not path.exists():
        raise ReportInputError(f"no {path.name} in {path.parent}")
    try:
        data = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError) as exc:
        raise ReportInputError(f"{path.name} could not be read: {exc}") from None
    except json.JSONDecodeError as exc:
        raise ReportInputError(f"{path.name} is not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise ReportInputError(f"{path.name}: expected a JSON object, found {type(data).__name__}")
    return data


def load_run(run_dir: Path) -> RunFiles:
    files = RunFiles(Path(run_dir))
    try:
        files.metrics = RunMetrics.read(files.run_dir / "metrics.json")
    except MetricsSchemaError as exc:
        files.why["metrics"] = str(exc)
    for name in ("scenario", "topology", "telemetry"):
        try:
            setattr(files, name, read_json(files.run_dir / f"{name}.json"))
        except ReportInputError as exc:
            files.why[name] = str(exc)
    return files


# --------------------------------------------------------------------------- formatting


def cell(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def bytes_per_s(value) -> str:
    if value is None:
        return "-"
    for unit, scale in (("GB/s", 1e9), ("MB/s", 1e6), ("kB/s", 1e3)):
        if abs(value) >= scale:
            return f"{value / scale:.3g} {unit}"
    return f"{value:.3g} B/s"


def png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()


def natural(name: str):
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", str(name))]


# --------------------------------------------------------------------------- run sections


def fault_label(name: str) -> str:
    """'nic /tmp/fl-nic-x/h1.ctl: stall' -> 'h1: stall'; link faults stay as named."""
    return re.sub(r"nic \S*/([^/\s]+)\.ctl", r"\1", name)


def fault_times(m: RunMetrics | None) -> list[tuple[int, str]]:
    return [(f.started_ns, fault_label(f.name)) for f in (m.faults if m else ())
            if f.started_ns and not f.error]


def guarded(title: str, build: Callable[[], Section | None]) -> Section | None:
    """A section, or the section's title with one line saying why it is left out."""
    try:
        return build()
    except ReportInputError as exc:
        return Section(title, [Note(f"Left out: {exc}.")])
    except Exception as exc:  # noqa: BLE001 - one bad input must not cost the whole report
        plt.close("all")
        return Section(title, [Note(f"Left out: could not be drawn from this run's files "
                                    f"({type(exc).__name__}: {exc}).")])


def telemetry_ports(run: RunFiles) -> tuple[dict[str, dict[str, dict]], list[str]]:
    """{switch: {port: {counter: [8 ints]}}} without switches that reported an error."""
    telemetry = run.need("telemetry")
    good, problems = {}, []
    for switch, ports in telemetry.items():
        if not isinstance(ports, dict) or "error" in ports:
            why = ports.get("error") if isinstance(ports, dict) else f"found {ports!r}"
            problems.append(f"telemetry of {switch} unavailable: {why}")
            continue
        good[switch] = {p: v for p, v in ports.items() if isinstance(v, dict)}
    if not good:
        raise ReportInputError("telemetry.json has no readable switch: " + "; ".join(problems))
    return good, problems


def total(values) -> int:
    return sum(v for v in values or () if isinstance(v, (int, float)))
