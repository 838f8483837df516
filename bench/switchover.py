"""Switchover after a link failure on 4, 20 and 45 switches, as a table (root + Mininet).

`RUNS` `link-failure-allreduce` runs per fabric (leafspine:2,2,1, fattree:4,
fattree:6; `--runs N` or FABRICLAB_BENCH_SWITCHOVER_RUNS), a ring AllReduce
between the first and the last host, CREDIT, fast reroute with fault notification; the failed link is the last switch link
of the first host's path to the last (one ring flow goes down into it at a
switch without a backup: notification; the other goes up into it at a switch
with one: local switchover). Every fabric runs at one reduced link rate the 2-core
machine keeps with 45 switch processes (`RATES`), so the sizes compare. From each run's metrics.json: the
agents' detection and switchover, the largest receiver outage per direction,
and the SM's global reroute; the table gives each as median (min-max) over the
runs, and bench.json `switchover_<fabric>_<quantity>_ms` (median), `_min_ms`,
`_max_ms` and `_runs`. Each run takes the emulation lock the Mininet tests take
(topologies/ledger.emulation_lock), so it never overlaps a test's emulation.

    python -m bench.switchover --runs 5 fattree:4      # one fabric alone
"""

from __future__ import annotations

import os
import shutil
import statistics
import tempfile
from pathlib import Path

from fabriclab import scenario as sc
from fabriclab.plan import fabric_for
from fabriclab.runner import run
from topologies.ledger import emulation_lock
from topologies.targets import resolve
from traffic.recovery import path_links

# topology -> link rate (frames/s): one rate every fabric holds on a 2-core machine, so no
# switch is CPU-bound and the sizes compare (at 2000 frames/s fattree:4 managed ~310
# frames/s per flow and its gap measured standing queues: docs/controller.md)
RATES = {"leafspine:2,2,1": 500, "fattree:4": 500, "fattree:6": 500}
SCENARIO_RATE = 2000  # the link-failure-allreduce scenario's own rate; lower is "reduced"
ROUTING = "minhop"
RUNS = 3  # per fabric; FABRICLAB_BENCH_SWITCHOVER_RUNS or --runs


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


def _key(topology: str) -> str:
    return "switchover_" + topology.replace(":", "").replace(",", "_")


def _one(topology: str, out: Path) -> dict:
    """One run's figures, or {"error": why}."""
    m = run(_scenario(topology, RATES[topology]), resolve("embedded"), out).metrics
    if m.error is not None or m.detection_ms is None:
        return {"error": m.error or f"no agent report ({m.verdict})"}
    reroutes = [r["global_reroute_ms"] for r in m.sm_timeline if "global_reroute_ms" in r]
    return {"detection_ms": m.detection_ms, "switchover_ms": m.switchover_ms,
            "gap_ms": m.recovery_gap_ms, "rtt_ms": m.rtt_ms, "verdict": m.verdict,
            "by_direction": dict(m.recovery_gap_by_direction or {}),
            "global_reroute_ms": reroutes[0] if reroutes else None,
            "reasons": list(m.verdict_reasons) if m.verdict != "pass" else []}


def _spread(values: list) -> tuple[float, float, float] | None:
    """(median, min, max) of the values that are not None; None if there are none."""
    got = sorted(v for v in values if v is not None)
    if not got:
        return None
    return statistics.median(got), got[0], got[-1]


def summarise(topology: str, switches: int, runs: list[dict]) -> dict[str, float | str]:
    """The flat bench.json figures of one fabric's runs: per quantity its median, min and
    max over the runs that produced it; `runs` counts those, `errors` the others."""
    key = _key(topology)
    good = [r for r in runs if "error" not in r]
    fig: dict[str, float | str] = {f"{key}_switches": float(switches),
                                   f"{key}_rate_pps": float(RATES[topology]),
                                   f"{key}_runs": float(len(good))}
    if len(good) < len(runs):
        fig[f"{key}_errors"] = "; ".join(r["error"] for r in runs if "error" in r)
    if not good:
        return fig
    for r in good:  # what the receivers waited beyond the agents' own work
        r["after_switchover_ms"] = (None if None in (r["gap_ms"], r["switchover_ms"])
                                    else r["gap_ms"] - r["detection_ms"] - r["switchover_ms"])
    for name in ("detection_ms", "switchover_ms", "gap_ms", "after_switchover_ms", "rtt_ms",
                 "global_reroute_ms"):
        spread = _spread([r[name] for r in good])
        if spread is not None:
            base = name[:-3]
            for suffix, value in zip(("ms", "min_ms", "max_ms"), spread):
                fig[f"{key}_{base}_{suffix}"] = round(value, 3)
    for way in sorted({w for r in good for w in r["by_direction"]}):
        spread = _spread([r["by_direction"].get(way) for r in good])
        if spread is not None:
            fig[f"{key}_gap_{way.replace('->', '_to_')}_ms"] = round(spread[0], 3)
    failed = [f"{r['verdict']}: {'; '.join(r.get('reasons') or ())}" for r in good
              if r["verdict"] != "pass"]
    if failed:
        fig[f"{key}_not_passed"] = " | ".join(failed)
    return fig


def _cell(figures: dict, key: str, name: str) -> str:
    mid = figures.get(f"{key}_{name}_ms")
    if mid is None:
        return ""
    low, high = figures[f"{key}_{name}_min_ms"], figures[f"{key}_{name}_max_ms"]
    return f"{mid:.1f} ({low:.1f}-{high:.1f})"


def table(figures: dict, topologies=None) -> str:
    """Per fabric: switches, runs, link rate, then detection, switchover, largest gap, the
    gap after detection and switchover (what the transport and the new path add: it
    should not grow with the fabric) and global reroute as `median (min-max)` over the
    runs, ms."""
    lines = ["| fabric | switches | runs | rate pps | detection ms | switchover ms "
             "| largest gap ms | gap after switchover ms | global reroute ms |",
             "|" + "---|" * 9]
    for topology in topologies or RATES:
        key = _key(topology)
        if f"{key}_switches" not in figures:
            continue
        rate = figures[f"{key}_rate_pps"]
        reduced = " (reduced)" if rate < SCENARIO_RATE else ""
        runs = f"{figures[f'{key}_runs']:g}"
        if f"{key}_errors" in figures:
            runs += f" (+{figures[f'{key}_errors'].count(';') + 1} failed)"
        lines.append(f"| {topology} | {figures[f'{key}_switches']:g} | {runs} | {rate:g}{reduced} | "
                     + " | ".join(_cell(figures, key, n) for n in
                                  ("detection", "switchover", "gap", "after_switchover",
                                   "global_reroute")) + " |")
    return "\n".join(lines)


def main(runs: int | None = None, topologies=None) -> dict[str, float | str]:
    if os.geteuid() != 0 or shutil.which("mn") is None:
        return {"switchover_skipped": "needs root and Mininet"}
    runs = runs or int(os.environ.get("FABRICLAB_BENCH_SWITCHOVER_RUNS", RUNS))
    topologies = list(topologies or RATES)
    unknown = [t for t in topologies if t not in RATES]
    if unknown:
        raise ValueError(f"no switchover bench for {', '.join(unknown)}: one of {', '.join(RATES)}")
    figures: dict[str, float | str] = {}
    out = Path(tempfile.mkdtemp(prefix="fl-bench-switchover-"))
    try:
        for topology in topologies:
            switches = len(fabric_for(_scenario(topology, 1)).switches)
            results = []
            for i in range(runs):
                with emulation_lock():  # per run: other sessions' tests may run between
                    results.append(_one(topology, out / f"{_key(topology)}-{i}"))
                print(f"   {topology} run {i + 1}/{runs}: {results[-1]}", flush=True)
            figures.update(summarise(topology, switches, results))
    finally:
        shutil.rmtree(out, ignore_errors=True)
    print(table(figures, topologies))
    return figures


def command_line(bench_main, doc: str, runs_help: str, choices) -> None:
    """`python -m bench.<name> [--runs N] [topology...]` for a bench run per fabric."""
    import argparse

    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--runs", type=int, default=None, help=runs_help)
    parser.add_argument("topologies", nargs="*", help=f"some of {', '.join(choices)} (default all)")
    args = parser.parse_args()
    try:
        bench_main(args.runs, args.topologies)
    except ValueError as exc:
        parser.error(str(exc))


if __name__ == "__main__":
    command_line(main, __doc__, f"runs per fabric (default {RUNS})", RATES)
