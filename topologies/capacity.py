"""Does a fabric fit this machine? Checked before anything starts.

Three budgets, each stated with its numbers:
* memory: every switch and every host NIC process has a resident size (measured
  figures from results/bench.json when `make bench` has run, else conservative
  defaults) and the total must fit in the memory available now;
* packet processing: every switch port can receive up to its link rate; the sum
  over all switch ports is the worst-case forwarding load, compared with what the
  switch processes were measured to forward times the cores: the embedded switch's
  bench `switch_pps`, real bmv2's `same_program_bmv2_pps` (bench.bmv2_pps), else the
  defaults below;
* processes: one per switch plus one per host (NIC emulator) and capture.

A fabric over the memory budget is refused; over the packet budget it is
warned about (the run would measure the CPU, not the fabric), and the report
repeats the warning.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from topologies.description import Fabric

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SWITCH_RSS_MB = 80.0  # an embedded switch with fabric.p4 loaded
DEFAULT_HOST_RSS_MB = 45.0  # NIC emulator + tcpdump
DEFAULT_SWITCH_PPS = 8000.0  # per core, when no benchmark has run
DEFAULT_BMV2_PPS = 2500.0  # real simple_switch_grpc with fabric.p4, per core (bench.bmv2_pps)
# switch kind -> (bench.json figure, default when no benchmark has run)
SWITCH_RATE = {"embedded": ("switch_pps", DEFAULT_SWITCH_PPS),
               "bmv2": ("same_program_bmv2_pps", DEFAULT_BMV2_PPS)}


class CapacityError(RuntimeError):
    """The fabric does not fit this machine."""


@dataclass(frozen=True)
class CapacityReport:
    fits: bool
    warnings: tuple[str, ...]
    memory_needed_mb: float
    memory_available_mb: float
    worst_case_pps: float
    capacity_pps: float

    def as_dict(self) -> dict:
        return {"fits": self.fits, "warnings": list(self.warnings),
                "memory_needed_mb": round(self.memory_needed_mb, 1),
                "memory_available_mb": round(self.memory_available_mb, 1),
                "worst_case_pps": round(self.worst_case_pps, 1),
                "capacity_pps": round(self.capacity_pps, 1)}


def _mem_available_mb() -> float:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _bench_figures() -> dict:
    try:
        return json.loads((ROOT / "results" / "bench.json").read_text())
    except (OSError, ValueError):
        return {}


def check(fabric: Fabric, memory_available_mb: float | None = None,
          cores: int | None = None, bench: dict | None = None,
          switch: str = "embedded") -> CapacityReport:
    """`switch`: which switch runs the fabric (embedded or bmv2), for its packet rate."""
    bench = _bench_figures() if bench is None else bench
    cores = cores or os.cpu_count() or 1
    available = _mem_available_mb() if memory_available_mb is None else memory_available_mb
    switch_mb = float(bench.get("switch_rss_mb", DEFAULT_SWITCH_RSS_MB))
    needed = len(fabric.switches) * switch_mb + len(fabric.hosts) * DEFAULT_HOST_RSS_MB
    rate_key, default_pps = SWITCH_RATE[switch]
    per_core = float(bench.get(rate_key, default_pps))
    capacity = per_core * cores
    worst = 0.0
    for sw in fabric.switches:
        for link in fabric.links_of(sw.name):
            worst += link.params.rate_pps
    warnings = []
    fits = needed <= 0.8 * available
    if not fits:
        warnings.append(
            f"{fabric.name} needs about {needed:.0f} MB ({len(fabric.switches)} switches x "
            f"{switch_mb:.0f} MB + {len(fabric.hosts)} hosts x {DEFAULT_HOST_RSS_MB:.0f} MB) "
            f"but only {available:.0f} MB are available")
    if worst > capacity:
        warnings.append(
            f"{fabric.name} at full link rate asks the switches to forward {worst:.0f} packets/s; "
            f"this machine forwards about {capacity:.0f} ({cores} cores x {per_core:.0f}"
            f"{' measured' if rate_key in bench else ' assumed'} for the {switch} switch): "
            "lower [link].rate_pps "
            "or the traffic will be CPU-bound")
    return CapacityReport(fits, tuple(warnings), needed, available, worst, capacity)


def per_server(fabric: Fabric, placement) -> dict[str, dict]:
    """What each server is asked to run and forward (a topologies.placement.Placement):
    its switches and hosts, and the worst case of its switch ports at full link rate.
    Namespace servers share this machine's cores, which `check` counts once."""
    out = {s: {"switches": 0, "hosts": 0, "worst_case_pps": 0.0, "tunnels": 0}
           for s in placement.servers}
    for node in fabric.nodes:
        server = out[placement.node_server[node.name]]
        if node in fabric.hosts:
            server["hosts"] += 1
            continue
        server["switches"] += 1
        server["worst_case_pps"] += sum(lk.params.rate_pps for lk in fabric.links_of(node.name))
    for link in placement.cross_server_links:
        for end in (link.a, link.b):
            out[placement.node_server[end]]["tunnels"] += 1
    return out


def servers_needed(fabric: Fabric, cores_per_server: int, bench: dict | None = None,
                   switch: str = "embedded") -> int:
    """How many servers of `cores_per_server` cores forward `fabric` at full link rate
    with `switch` (embedded or bmv2) switches."""
    bench = _bench_figures() if bench is None else bench
    rate_key, default_pps = SWITCH_RATE[switch]
    per_core = float(bench.get(rate_key, default_pps))
    worst = sum(lk.params.rate_pps for sw in fabric.switches for lk in fabric.links_of(sw.name))
    return max(1, -(-int(worst) // int(per_core * cores_per_server)))
