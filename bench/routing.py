"""Routing time and peak memory on k-ary fat trees, per engine, up to 110k endpoints.

Each (engine, k) runs in a fresh process (`python -m bench.routing --one ENGINE K`)
so its peak RSS (ru_maxrss) is its own: the fabric description, the engine's
working set and the tables (one byte per switch and LID, 7,220 x 117k = 845 MB
at k=76). Seconds cover `engine.route(fabric, lids)` only; building the
fabric is reported apart.

LIDs are dense (hosts 1..H, then switches), the order `LidMap` gives, without
its 16-bit limit: past k=56 a fat tree needs more than the 49,151 unicast LIDs,
which is the extended-address mode DESIGN.md keeps open.

The sizes run while the time budget lasts: ftree to k=76 (109,744 hosts), the
per-destination engines (minhop, updn; O(switches x links) per leaf) as far as
a run takes under PER_RUN_LIMIT seconds. OpenSM's ftree on the same fabrics
is measured by `controller.opensm` when opensm and ibsim are installed
(`opensm_ftree_kK_s`, and `opensm_over_ftree_kK` = OpenSM's seconds / ours);
otherwise `opensm_skipped` says why. OpenSM stops at k=56 anyway (16-bit LIDs).
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUDGET_S = 120.0  # our engines
OPENSM_BUDGET_S = 60.0  # on top: OpenSM under ibsim
PER_RUN_LIMIT = 20.0
SIZES = {"ftree": [4, 8, 16, 24, 32, 40, 48, 56, 64, 72, 76],
         "updn": [4, 8, 16, 24],
         "minhop": [4, 8, 16, 24]}
OPENSM_SIZES = [4, 8, 16, 24, 32]  # k=32: 26 s wall (ibsim discovery + 8 s of routing)


def dense_lids(fabric) -> dict[str, int]:
    """Hosts 1..H by number, then switches: LidMap's order without its 16-bit cap."""
    def number(node) -> int:
        return int(node.name[1:])

    lids = {h.name: i for i, h in enumerate(sorted(fabric.hosts, key=number), 1)}
    base = len(lids)
    lids.update({s.name: base + i for i, s in enumerate(sorted(fabric.switches, key=number), 1)})
    return lids


def fast_fattree(k: int):
    """`topologies.generators.build("fattree:K")`, built in linear time.

    The generator's builder counts nodes by scanning them (quadratic: minutes at
    k=76); this swaps in a counting builder for the one call. Same output.
    """
    from unittest import mock

    import topologies.builder as builder
    import topologies.generators as generators
    from topologies.description import Node, NodeKind

    class CountingBuilder(generators._Builder):
        def __init__(self, *args) -> None:
            super().__init__(*args)
            self._count = {NodeKind.SWITCH: 0, NodeKind.HOST: 0}

        def _add(self, kind, guid_base, prefix, first_port, tier, guid, label) -> str:
            self._count[kind] += 1
            n = self._count[kind]
            name = f"{prefix}{n}"
            self.nodes.append(Node(name, kind, guid or guid_base + n,
                                   device_id=n if kind is NodeKind.SWITCH else 0,
                                   tier=tier, label=label))
            self._next_port[name] = first_port
            return name

        def add_switch(self, tier: int = 0, guid: int | None = None, label: str = "") -> str:
            return self._add(NodeKind.SWITCH, builder.SWITCH_GUID_BASE, "s", 1, tier, guid,
                             label)

        def add_host(self, guid: int | None = None, label: str = "") -> str:
            return self._add(NodeKind.HOST, builder.HOST_GUID_BASE, "h", 0, 0, guid, label)

    with mock.patch.object(generators, "_Builder", CountingBuilder):
        return generators.build(f"fattree:{k}")


def run_one(engine_name: str, k: int) -> dict[str, float]:
    """Route fattree:K with one engine in this process; figures of this run."""
    from controller.routing import engine

    started = time.perf_counter()
    fabric = fast_fattree(k)
    lids = dense_lids(fabric)
    build_s = time.perf_counter() - started
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    router = engine(engine_name)  # imports the engine modules outside the timing
    started = time.perf_counter()
    routes = router.route(fabric, lids)
    seconds = time.perf_counter() - started
    entries = sum(len(getattr(t, "ports", t)) for t in routes.values())
    return {"hosts": len(fabric.hosts), "switches": len(fabric.switches), "seconds": seconds,
            "build_seconds": build_s, "table_bytes": entries,
            "rss_before_mb": rss_before,
            "peak_memory_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def _child(engine_name: str, k: int, timeout: float) -> dict | None:
    try:
        proc = subprocess.run([sys.executable, "-m", "bench.routing", "--one", engine_name,
                               str(k)], cwd=ROOT, capture_output=True, text=True,
                              timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return None
    if proc.returncode != 0:
        raise RuntimeError(f"{engine_name} fattree:{k} failed: {proc.stderr.strip()[-300:]}")
    return json.loads(proc.stdout)


def main(budget_s: float = BUDGET_S) -> dict[str, float | str]:
    figures: dict[str, float | str] = {}
    deadline = time.monotonic() + budget_s
    for engine_name, sizes in SIZES.items():
        last: tuple[int, float] | None = None
        for k in sizes:
            remaining = deadline - time.monotonic()
            # tables grow as k^5 (switches x LIDs): skip a size that cannot finish in time
            if last and last[1] * (k / last[0]) ** 5 > min(remaining, PER_RUN_LIMIT):
                break
            result = _child(engine_name, k, timeout=max(1.0, min(remaining, 4 * PER_RUN_LIMIT)))
            if result is None:
                break
            prefix = f"routing_{engine_name}_k{k}"
            figures[f"{prefix}_s"] = round(result["seconds"], 4)
            figures[f"{prefix}_peak_mb"] = round(result["peak_memory_mb"], 1)
            figures[f"routing_{engine_name}_max_hosts"] = result["hosts"]
            print(f"   {engine_name:6} fattree:{k:<3} {result['hosts']:>7} hosts "
                  f"{result['switches']:>5} switches  {result['seconds']:8.3f} s  "
                  f"{result['peak_memory_mb']:7.1f} MB peak", flush=True)
            last = (k, max(result["seconds"], 1e-3))
    figures.update(opensm_figures(figures, deadline + OPENSM_BUDGET_S))
    return figures


def opensm_figures(ours: dict, deadline: float) -> dict[str, float | str]:
    """OpenSM's ftree routing seconds on the same fat trees, and its ratio to ours."""
    import tempfile

    from controller.opensm import OpenSmUnavailable, opensm_available, opensm_ftree_seconds

    try:
        opensm_available()
    except OpenSmUnavailable as exc:
        print(f"   opensm skipped: {exc}")
        return {"opensm_skipped": str(exc)}
    figures: dict[str, float | str] = {}
    last: tuple[int, float] | None = None
    with tempfile.TemporaryDirectory(prefix="smt-opensm-") as tmp:
        for k in OPENSM_SIZES:
            remaining = deadline - time.monotonic()
            if last and last[1] * (k / last[0]) ** 5 > remaining:
                break
            started = time.monotonic()
            try:
                seconds = opensm_ftree_seconds(fast_fattree(k), Path(tmp) / f"k{k}",
                                               timeout=max(5.0, remaining))
            except (OpenSmUnavailable, subprocess.TimeoutExpired) as exc:
                figures["opensm_skipped"] = f"fattree:{k}: {exc}"
                print(f"   opensm fattree:{k}: {exc}")
                break
            wall = time.monotonic() - started
            figures[f"opensm_ftree_k{k}_s"] = round(seconds, 4)
            line = f"   opensm fattree:{k:<3} {seconds:8.3f} s routing ({wall:.1f} s with ibsim)"
            if f"routing_ftree_k{k}_s" in ours:
                ratio = seconds / max(ours[f"routing_ftree_k{k}_s"], 1e-6)
                figures[f"opensm_over_ftree_k{k}"] = round(ratio, 2)
                line += f"  = {ratio:.1f}x ours"
            print(line, flush=True)
            last = (k, wall)
    return figures


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--one":
        print(json.dumps(run_one(sys.argv[2], int(sys.argv[3]))))
    else:
        for key, value in main().items():
            print(f"{key}  {value}")
