"""Delivered arrivals per flow from the NICs' receive logs, read leniently for reports:
a malformed line (a truncated last line, say) is counted and skipped, never fatal.
traffic/timing.py's `arrivals_from_recv_logs` is the strict reader."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path


class NoArrivalsError(Exception):
    """A run directory without NIC receive logs."""


@dataclass(frozen=True)
class Arrivals:
    """Delivered arrival times (ns) per flow from the NICs' receive logs (admitted == 1)."""

    by_flow: dict[int, list[int]]
    problems: tuple[str, ...]


def read_arrivals(nics_dir: Path) -> Arrivals:
    """Lenient reader of nics/*.recv.csv: a bad line is counted and skipped, not fatal."""
    logs = sorted(nics_dir.glob("*.recv.csv")) if nics_dir.is_dir() else []
    if not logs:
        raise NoArrivalsError(f"no NIC receive logs (nics/*.recv.csv) in {nics_dir.parent}")
    by_flow: dict[int, list[int]] = defaultdict(list)
    problems = []
    for log in logs:
        bad = 0
        try:
            with open(log, errors="replace") as f:
                for line in f:
                    if line.startswith("#") or line.startswith("flow,"):
                        continue
                    cells = line.split(",")
                    try:
                        if len(cells) != 9:
                            raise ValueError
                        if int(cells[8]) == 1:  # 0 buffer drop, 2 discarded by RC
                            by_flow[int(cells[0])].append(int(cells[3]))
                    except ValueError:
                        bad += 1
        except OSError as exc:
            problems.append(f"{log.name} could not be read: {exc}")
            continue
        if bad:
            problems.append(f"{log.name}: {bad} malformed line(s) skipped")
    return Arrivals(dict(by_flow), tuple(problems))
