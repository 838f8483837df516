"""Victim goodput: flows that neither start nor end at a faulted host, while the fault lasts,
against the same interval of a baseline run without the fault (DESIGN.md "Measurements").

A run directory holds what this needs: address_book.json (host -> LID), flows/*.flows.json
(flow -> source, DLID) and nics/*.recv.csv (arrivals).
"""

from __future__ import annotations

import json
from pathlib import Path

from traffic.metrics import VictimGoodput
from traffic.recovery import flows_of
from traffic.timing import arrivals_from_recv_logs, victim_goodput


def flow_hosts(run_dir: Path) -> dict[int, tuple[str, str]]:
    """Flow id -> (source host, destination host), from a run's files."""
    try:
        book = json.loads((run_dir / "address_book.json").read_text())["hosts"]
    except (OSError, ValueError, KeyError):
        return {}
    host_of_lid = {entry["lid"]: name for name, entry in book.items()}
    flows = flows_of(sorted((run_dir / "flows").glob("*.flows.json")),
                     {name: entry["lid"] for name, entry in book.items()})
    return {flow: (src, host_of_lid.get(dlid, "?")) for flow, (src, dlid) in flows.items()}


def victims_during(run_dir: Path, start_ns: int, baseline_dir: Path, baseline_start_ns: int,
                   faulted: set[str], begin_s: float, end_s: float) -> VictimGoodput:
    """Goodput of the victims from `begin_s` to `end_s` after each run's traffic start."""
    flows = flow_hosts(run_dir)
    victims = sorted(flow for flow, (src, dst) in flows.items()
                     if src not in faulted and dst not in faulted)
    fault_arrivals = arrivals_from_recv_logs(sorted((run_dir / "nics").glob("*.recv.csv")))
    base_arrivals = arrivals_from_recv_logs(sorted((baseline_dir / "nics").glob("*.recv.csv")))
    # The baseline's victims may finish before the fault would have ended: compare over
    # the part of the interval in which the baseline still moved victim traffic.
    last = max((max(base_arrivals.get(f, [0])) for f in victims), default=0) - baseline_start_ns
    end_s = min(end_s, last / 1e9) if last > 0 else end_s
    if end_s <= begin_s:
        return VictimGoodput(error="the baseline's victims finished before the fault")
    window = (int(begin_s * 1e9), int(end_s * 1e9))
    result = victim_goodput(fault_arrivals, base_arrivals, victims,
                            tuple(start_ns + t for t in window),
                            tuple(baseline_start_ns + t for t in window))
    return VictimGoodput(**result, victims=tuple(victims), faulted_hosts=tuple(sorted(faulted)),
                         window_s=(begin_s, round(end_s, 3)))
