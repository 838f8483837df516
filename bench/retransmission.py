"""Go-back-N against selective repeat after a link failure, side by side (root + Mininet).

The run of bench.switchover (a ring AllReduce between the first and the last host,
CREDIT, fast reroute with fault notification, the failed link on their path), once
with each RC transport configuration of `CONFIGS`: the retransmission mode
(`[traffic].rc_retransmission`: `go-back-n`, as InfiniBand RC does, or `selective`,
which resends only the hole the receiver's NAK names) and the window (`rc_window`:
the default 128 frames, or 32, about twice the round trip's worth of frames at these
rates, which keeps short the queues the NAK and the resent hole wait in), the
configurations alternating run by run so they see the same machine. Per configuration:
the data plane's gap (frames reaching the receivers' ports: the fabric's recovery,
which the mode must not change), the delivery gap (in-order delivery: what the
application waits, retransmission included), the frames retransmitted and the
collective's completion time, as median (min-max) over `--runs` runs.
bench.json: `retransmission_<fabric>_<config>_<quantity>` (median) and `_runs`.

    python -m bench.retransmission --runs 5 fattree:4
"""

from __future__ import annotations

import os
import shutil
import statistics
import tempfile
from pathlib import Path

from bench.switchover import RATES, _scenario, command_line
from fabriclab import scenario as sc
from fabriclab.runner import run
from topologies.ledger import emulation_lock
from topologies.targets import resolve

# name -> (rc_retransmission, rc_window)
CONFIGS = {"go-back-n": ("go-back-n", 128), "selective": ("selective", 128),
           "go-back-n+w32": ("go-back-n", 32), "selective+w32": ("selective", 32)}
TOPOLOGIES = ("leafspine:2,2,1", "fattree:4")
RUNS = 3  # per fabric and mode; FABRICLAB_BENCH_RETRANSMISSION_RUNS or --runs
QUANTITIES = ("gap_ms", "delivery_gap_ms", "retransmitted", "cct_ms")


def _with_mode(topology: str, mode: str) -> sc.Scenario:
    retransmission, window = CONFIGS[mode]
    data = _scenario(topology, RATES[topology]).as_dict()
    data["traffic"] = {**data["traffic"], "rc_retransmission": retransmission,
                       "rc_window": window}
    return sc.parse(data, f"retransmission bench on {topology} ({mode})")


def _one(topology: str, mode: str, out: Path) -> dict:
    """One run's figures, or {"error": why}."""
    m = run(_with_mode(topology, mode), resolve("embedded"), out).metrics
    if m.error is not None or m.delivery_gap_ms is None:
        return {"error": m.error or f"no delivery gap ({m.verdict})"}
    return {"gap_ms": m.recovery_gap_ms, "delivery_gap_ms": m.delivery_gap_ms,
            "retransmitted": m.retransmitted, "cct_ms": m.cct_ms, "verdict": m.verdict}


def _key(topology: str, mode: str) -> str:
    return ("retransmission_" + topology.replace(":", "").replace(",", "_") + "_"
            + mode.replace("-", "").replace("+", "_"))


def summarise(topology: str, mode: str, runs: list[dict]) -> dict[str, float | str]:
    """Per quantity its median, min and max over the runs that gave it."""
    key = _key(topology, mode)
    good = [r for r in runs if "error" not in r]
    fig: dict[str, float | str] = {f"{key}_runs": float(len(good))}
    if len(good) < len(runs):
        fig[f"{key}_errors"] = "; ".join(r["error"] for r in runs if "error" in r)
    for name in QUANTITIES:
        got = sorted(r[name] for r in good if r[name] is not None)
        if got:
            base = name.removesuffix("_ms")
            unit = "_ms" if name.endswith("_ms") else ""
            fig[f"{key}_{base}{unit}"] = round(statistics.median(got), 3)
            fig[f"{key}_{base}_min{unit}"] = round(got[0], 3)
            fig[f"{key}_{base}_max{unit}"] = round(got[-1], 3)
    not_passed = [r["verdict"] for r in good if r["verdict"] != "pass"]
    if not_passed:
        fig[f"{key}_not_passed"] = ", ".join(not_passed)
    return fig


def _cell(figures: dict, key: str, base: str, unit: str) -> str:
    mid = figures.get(f"{key}_{base}{unit}")
    if mid is None:
        return ""
    low, high = figures[f"{key}_{base}_min{unit}"], figures[f"{key}_{base}_max{unit}"]
    return f"{mid:.1f} ({low:.1f}-{high:.1f})" if unit else f"{mid:g} ({low:g}-{high:g})"


def table(figures: dict, topologies=TOPOLOGIES) -> str:
    lines = ["| fabric | transport | runs | data-plane gap ms | delivery gap ms | retransmitted "
             "| CCT ms |", "|" + "---|" * 7]
    for topology in topologies:
        for mode in CONFIGS:
            key = _key(topology, mode)
            if f"{key}_runs" not in figures:
                continue
            lines.append(f"| {topology} | {mode} | {figures[f'{key}_runs']:g} | "
                         + " | ".join(_cell(figures, key, base, unit) for base, unit in
                                      (("gap", "_ms"), ("delivery_gap", "_ms"),
                                       ("retransmitted", ""), ("cct", "_ms"))) + " |")
    return "\n".join(lines)


def main(runs: int | None = None, topologies=None) -> dict[str, float | str]:
    if os.geteuid() != 0 or shutil.which("mn") is None:
        return {"retransmission_skipped": "needs root and Mininet"}
    runs = runs or int(os.environ.get("FABRICLAB_BENCH_RETRANSMISSION_RUNS", RUNS))
    topologies = list(topologies or TOPOLOGIES)
    unknown = [t for t in topologies if t not in RATES]
    if unknown:
        raise ValueError(f"no retransmission bench for {', '.join(unknown)}: "
                         f"one of {', '.join(RATES)}")
    figures: dict[str, float | str] = {}
    out = Path(tempfile.mkdtemp(prefix="fl-bench-retransmission-"))
    try:
        for topology in topologies:
            results: dict[str, list[dict]] = {mode: [] for mode in CONFIGS}
            for i in range(runs):
                for mode in CONFIGS:  # alternating: all see the same machine
                    with emulation_lock():
                        run_dir = out / f"{_key(topology, mode)}-{i}"
                        results[mode].append(_one(topology, mode, run_dir))
                    print(f"   {topology} {mode} run {i + 1}/{runs}: {results[mode][-1]}",
                          flush=True)
            for mode in CONFIGS:
                figures.update(summarise(topology, mode, results[mode]))
    finally:
        shutil.rmtree(out, ignore_errors=True)
    print(table(figures, topologies))
    return figures


if __name__ == "__main__":
    command_line(main, __doc__, f"runs per configuration (default {RUNS})", TOPOLOGIES)
