"""Figures over time from what the NICs recorded: collective completion times and bus
bandwidth, recovery gaps after a failure, goodput per bin and the victims' goodput."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from pathlib import Path

from traffic.collectives import BUSBW_FACTOR
from traffic.nic import read_recv_log

# --------------------------------------------------------------------------- collectives


def collective_times(nic_summaries: Iterable[Mapping]) -> dict[str, dict]:
    """Per collective id, over all ranks' NIC summaries (traffic/nic.py).

    cct: first frame any rank sent -> last rank complete (its last receive
    delivered, or its last send for a rank that only sends); null when a rank
    did not complete.
    """
    per_coll: dict[str, list[dict]] = {}
    for summary in nic_summaries:
        for coll_id, part in summary.get("collectives", {}).items():
            per_coll.setdefault(coll_id, []).append(part)
    out = {}
    for coll_id, parts in sorted(per_coll.items(), key=lambda kv: int(kv[0])):
        starts = [p["start_ns"] for p in parts if p.get("start_ns") is not None]
        complete = all(p.get("complete") for p in parts)
        end = max(p["end_ns"] for p in parts) if complete else None
        cct_ns = end - min(starts) if complete and starts else None
        out[coll_id] = {"ranks": len(parts), "complete": complete,
                        "start_ns": min(starts) if starts else None, "end_ns": end,
                        "cct_ms": None if cct_ns is None else cct_ns / 1e6}
    return out


def bandwidth(message_bytes: int, cct_ms: float | None, algorithm: str, n: int) -> dict:
    """nccl-tests' algbw = size / time and busbw = algbw x factor (bytes/s); null without cct.

    Factors: all_reduce 2(n-1)/n, alltoall (n-1)/n, incast and permutation 1.
    """
    if not cct_ms:
        return {"algbw": None, "busbw": None}
    algbw = message_bytes / (cct_ms / 1e3)
    return {"algbw": algbw, "busbw": algbw * BUSBW_FACTOR[algorithm](n)}


# --------------------------------------------------------------------------- recovery


def recovery_gaps(arrivals: Mapping[int, Iterable[int]], failure_ns: int,
                  window_ns: int = 100_000_000, share: float = 0.9,
                  horizon_ns: int = 1_000_000_000) -> dict[str, dict]:
    """Per flow, around a failure at failure_ns (CLOCK_REALTIME), from receive times (ns).

    gap_ms: the longest silence between consecutive arrivals from the last
    arrival before the failure to `horizon_ns` after it (frames already past
    the failed link still arrive in the first moments; the outage follows
    them).
    recovery_ms: failure -> end of the first `window_ns` window after it whose
    goodput is back to `share` of the goodput over the `window_ns` before the
    failure (null if it never is, or the flow had no goodput before).
    """
    out = {}
    for flow, times in arrivals.items():
        ts = sorted(times)
        before = [t for t in ts if t < failure_ns]
        after = [t for t in ts if t >= failure_ns]
        gap = None
        if before and after:
            seq = [before[-1]] + [t for t in after if t <= failure_ns + horizon_ns]
            if len(seq) == 1:
                seq.append(after[0])  # nothing within the horizon: the first arrival after
            gap = max(b - a for a, b in zip(seq, seq[1:])) / 1e6
        pre = sum(1 for t in before if t >= failure_ns - window_ns)
        recovery = None
        if pre and after:
            target = share * pre
            j = 0
            for i, t in enumerate(after):  # sliding window ending at each arrival
                while after[j] < t - window_ns:
                    j += 1
                if i - j + 1 >= target:
                    recovery = (t - failure_ns) / 1e6
                    break
        out[str(flow)] = {"gap_ms": gap, "recovery_ms": recovery,
                          "pre_failure_pps": pre * 1e9 / window_ns}
    return out


def arrivals_from_recv_logs(paths: Iterable[Path | str], delivered_only: bool = True
                            ) -> dict[int, list[int]]:
    """flow -> receive times (ns) of delivered DATA frames, from NICs' NAME.recv.csv logs.

    Delivered = `admitted` 1: not 0 (dropped by the receive buffer) nor 2 (RC:
    taken by the link but discarded by the transport, out of sequence or a
    duplicate), so goodput never counts a frame twice. With delivered_only
    False, every frame that reached the port (what the data plane delivered,
    before the transport's sequence check): the fabric's own recovery gap.
    """
    out: dict[int, list[int]] = {}
    for path in paths:
        for r in read_recv_log(path):
            if r.admitted == 1 or not delivered_only:
                out.setdefault(r.flow, []).append(r.recv_ns)
    return out


# --------------------------------------------------------------------------- goodput


def goodput_timeline(arrivals: Mapping[int, Iterable[int]], start_ns: int, bin_ms: float,
                     end_ns: int | None = None) -> dict[int, list[float]]:
    """Per flow, frames per second in consecutive `bin_ms` bins from start_ns.

    Bin i covers [start_ns + i x bin, start_ns + (i+1) x bin). Arrivals before
    start_ns, or at or after end_ns, are left out; without end_ns the bins run
    to the one holding the last arrival. Every flow gets the same bins.
    """
    bin_ns = bin_ms * 1e6
    kept = {flow: [t for t in times if t >= start_ns and (end_ns is None or t < end_ns)]
            for flow, times in arrivals.items()}
    if end_ns is not None:
        nbins = max(1, math.ceil((end_ns - start_ns) / bin_ns))
    else:
        last = max((max(ts) for ts in kept.values() if ts), default=start_ns)
        nbins = int((last - start_ns) // bin_ns) + 1
    out = {}
    for flow, times in kept.items():
        counts = [0] * nbins
        for t in times:
            counts[min(int((t - start_ns) // bin_ns), nbins - 1)] += 1
        out[flow] = [c * 1e3 / bin_ms for c in counts]
    return out


def victim_goodput(fault_arrivals: Mapping[int, Iterable[int]],
                   baseline_arrivals: Mapping[int, Iterable[int]],
                   victim_flows: Iterable[int | str],
                   fault_window_ns: tuple[int, int],
                   baseline_window_ns: tuple[int, int]) -> dict:
    """Goodput of the victim flows in a fault run relative to a baseline run without the fault.

    Arrivals are {flow: [recv_ns, ...]} (`arrivals_from_recv_logs`). Windows are
    absolute CLOCK_REALTIME [start_ns, end_ns), one per run: to line the runs
    up, take the same offsets from each run's own traffic start (its NICs'
    start_at), e.g. (fault_start + 1 s, fault_start + 3 s) and (baseline_start
    + 1 s, baseline_start + 3 s). Goodput = victim frames delivered in the
    window per second. Returns {"ratio": fault_pps / baseline_pps, "fault_pps",
    "baseline_pps", "flows": {flow: ratio}}; a ratio is None where the baseline
    delivered nothing. The metrics' top-level key is victim_goodput_ratio.
    """
    victims = sorted({int(f) for f in victim_flows})

    def pps(arrivals, window, flow):
        start, end = window
        if end <= start:
            raise ValueError(f"goodput window must end after it starts, got {window}")
        times = arrivals.get(flow, arrivals.get(str(flow), ()))
        return sum(1 for t in times if start <= t < end) * 1e9 / (end - start)

    def ratio(fault, baseline):
        return fault / baseline if baseline else None

    fault = {f: pps(fault_arrivals, fault_window_ns, f) for f in victims}
    base = {f: pps(baseline_arrivals, baseline_window_ns, f) for f in victims}
    fault_pps, baseline_pps = sum(fault.values()), sum(base.values())
    return {"ratio": ratio(fault_pps, baseline_pps), "fault_pps": fault_pps,
            "baseline_pps": baseline_pps,
            "flows": {str(f): ratio(fault[f], base[f]) for f in victims}}
