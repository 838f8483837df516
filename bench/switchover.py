"""Switchover after a link failure on 4, 20 and 45 switches, as a table (root + Mininet).

One `link-failure-allreduce` run per fabric (leafspine:2,2,1, fattree:4,
fattree:6), a ring AllReduce between the first and the last host, CREDIT,
fast reroute with fault notification; the failed link is the last switch link
of the first host's path to the last (one ring flow goes down into it at a
switch without a backup: notification; the other goes up into it at a switch
with one: local switchover). Link rates are reduced as the fabric grows so the
2-core machine keeps them (`RATES`). From each run's metrics.json: the
agents' detection and switchover, the largest receiver outage per direction,
and the SM's global reroute. Runs take the emulation lock the Mininet tests
take (tests/conftest.py), so they never overlap a test's emulation.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import tempfile
from pathlib import Path

from fabriclab import scenario as sc
from fabriclab.plan import fabric_for
from fabriclab.runner import run
from topologies.targets import resolve
from traffic.recovery import path_links

# topology -> link rate (frames/s): lower on the larger fabrics so no switch is CPU-bound
RATES = {"leafspine:2,2,1": 2000, "fattree:4": 2000, "fattree:6": 500}
EMULATION_LOCK = Path(os.environ.get("FABRICLAB_EMULATION_LOCK",
                                     "/tmp/fabriclab-emulation.lock"))
ROUTING = "minhop"


def _scenario(topology: str, rate_pps: int) -> sc.Scenario:
    from controller.lids import LidMap
    from controller.routing import engine

    data = sc.load("link-failure-allreduce").as_dict()
    data.update(topology=topology, routing=ROUTING, reroute="fast", duration_s=30)
    data["link"] = {**data["link"], "rate_pps": rate_pps}
    fabric = fabric_for(sc.parse(data, "probe"))
    hosts = [fabric.hosts[0].name, fabric.hosts[-1].name]
    lids = LidMap().assign(fabric)
    routes = engine(ROUTING).route(fabric, lids)
    links = path_links(fabric, routes, hosts[0], lids[hosts[1]],
                       {lid: name for name, lid in lids.items()})
    link = [lk for lk in links if all(e.startswith("s") for e in lk.split("-"))][-1]
    data["traffic"] = {**data["traffic"], "hosts": hosts, "repetitions": 1}
    data["faults"] = [{"at_s": 0.1, "kind": "link_down", "target": link}]
    return sc.parse(data, f"switchover bench on {topology}")


def _one(topology: str, out: Path) -> dict[str, float | str]:
    key = topology.replace(":", "").replace(",", "_")
    m = run(_scenario(topology, RATES[topology]), resolve("embedded"), out).metrics
    if m.error is not None or m.detection_ms is None:
        return {f"switchover_{key}_error": m.error or f"no agent report ({m.verdict})"}
    reroutes = [r["global_reroute_ms"] for r in m.sm_timeline if "global_reroute_ms" in r]
    fig: dict[str, float | str] = {
        f"switchover_{key}_switches": float(len(fabric_for(_scenario(topology, 1)).switches)),
        f"switchover_{key}_rate_pps": float(RATES[topology]),
        f"switchover_{key}_detection_ms": m.detection_ms,
        f"switchover_{key}_switchover_ms": m.switchover_ms,
        f"switchover_{key}_gap_ms": m.recovery_gap_ms,
        f"switchover_{key}_verdict": m.verdict,
    }
    for way, gap in (m.recovery_gap_by_direction or {}).items():
        fig[f"switchover_{key}_gap_{way.replace('->', '_to_')}_ms"] = gap
    if reroutes:
        fig[f"switchover_{key}_global_reroute_ms"] = reroutes[0]
    return fig


def _table(figures: dict) -> str:
    lines = ["| fabric | switches | rate pps | detection ms | switchover ms | largest gap ms "
             "| gap by direction ms | global reroute ms |", "|" + "---|" * 8]
    for topology in RATES:
        key = f"switchover_{topology.replace(':', '').replace(',', '_')}"
        if f"{key}_error" in figures:
            lines.append(f"| {topology} | | | error: {figures[f'{key}_error']} | | | | |")
            continue
        ways = ", ".join(f"{k[len(key) + 5:-3].replace('_to_', '->')} {v:.1f}"
                         for k, v in figures.items() if k.startswith(f"{key}_gap_")
                         and k.endswith("_ms") and k != f"{key}_gap_ms")
        cells = [figures.get(f"{key}_{n}") for n in
                 ("switches", "rate_pps", "detection_ms", "switchover_ms", "gap_ms")]
        lines.append(f"| {topology} | " + " | ".join(
            "" if c is None else f"{c:g}" if isinstance(c, float) else str(c) for c in cells)
            + f" | {ways} | {figures.get(f'{key}_global_reroute_ms', '')} |")
    return "\n".join(lines)


def main() -> dict[str, float | str]:
    if os.geteuid() != 0 or shutil.which("mn") is None:
        return {"switchover_skipped": "needs root and Mininet"}
    figures: dict[str, float | str] = {}
    out = Path(tempfile.mkdtemp(prefix="fl-bench-switchover-"))
    try:
        with open(EMULATION_LOCK, "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                for topology in RATES:
                    figures.update(_one(topology, out))
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)
    finally:
        shutil.rmtree(out, ignore_errors=True)
    print(_table(figures))
    return figures


if __name__ == "__main__":
    main()
