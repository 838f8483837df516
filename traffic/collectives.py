"""Collectives as dependency-driven schedules: plain data the NIC emulators execute.

A collective over n ranks moves a message of `message_bytes` split into n
chunks. Its schedule is a list of `Transfer`s: at `step`, rank `src` sends the
listed `chunks` to rank `dst`, once every transfer in `after` has fully
arrived at `src` (NCCL's rule: a step starts when the data it forwards or
reduces is there). Each rank's NIC gets its part as FLOWS.json entries
(`rank_flows`): its sends as flows with "after" keys, and the receives it must
see complete, keyed (coll_id, step, source LID).

Algorithms (`ALGORITHMS`):
* ring_allreduce: reduce-scatter then all-gather around the ring r -> r+1,
  2(n-1) steps; at step s < n-1 rank r sends chunk (r - s) mod n, at step
  n-1+k chunk (r + 1 - k) mod n; each step after the first waits for the
  previous step's chunk from r-1.
* hd_allreduce: recursive halving (reduce-scatter, partner r xor n/2^(i+1),
  half the window each time) then recursive doubling (all-gather, partner
  r xor 2^j), 2 log2(n) steps, n a power of two; each step waits for every
  earlier step's data (partial sums from different partners).
* alltoall: rank r sends chunk d to every rank d != r, all at once (step k-1
  to rank r+k), no dependencies.
* incast: every rank but `root` sends the whole message to root (step 0).
* permutation: rank r sends the whole message to perm[r] (default r + n/2).

Repetitions are separate collective ids (coll_id, coll_id+1, ...); a rank
starts repetition k+1 once its own part of repetition k is complete (all its
receives arrived), as nccl-tests' back-to-back iterations do. With `compute_s`
(a training job's iterations, traffic/training.py) each repetition's first step
waits that long more at every rank: the compute before the gradients' AllReduce.
Frames: chunk_bytes = message_bytes / n rounded up to whole frames of
`payload` bytes; every DATA frame carries flow, coll_id, step, chunk, PSN and
send time (APP header). Flow ids: flow_base + src * n + dst.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from traffic.addressing import SA_ADDRESSES, Peer, resolve


class ScheduleError(Exception):
    """A collective that cannot be built as asked (e.g. HD on a non power of two)."""


@dataclass(frozen=True)
class Transfer:
    """At `step`, src sends `chunks` to dst once the transfers keyed in `after` arrived at src."""

    coll_id: int
    step: int
    src: int
    dst: int
    chunks: tuple[int, ...]
    after: tuple[tuple[int, int, int], ...] = ()  # (coll_id, step, src) of transfers into src

    @property
    def key(self) -> tuple[int, int, int]:
        return (self.coll_id, self.step, self.src)


@dataclass(frozen=True)
class Endpoint:
    """Address book entry: what a rank's NIC is called and how a frame reaches it."""

    name: str
    lid: int
    mac: str
    sl: int | None = None  # the SL the SM gave paths to this host (None: the collective's)


@dataclass(frozen=True)
class CollectiveSpec:
    algorithm: str
    n: int
    message_bytes: int
    payload: int = 1024
    reps: int = 1
    coll_id: int = 1
    root: int = 0  # incast
    perm: tuple[int, ...] | None = None  # permutation
    sl: int = 0
    flow_base: int = 1000
    compute_s: float = 0.0  # a training job: each repetition's first step at every rank
    # starts this long after its dependencies (the iteration's compute, traffic/training.py)

    @property
    def chunk_frames(self) -> int:
        """Frames per chunk: message_bytes / n, in whole frames of `payload` bytes."""
        return max(1, math.ceil(self.message_bytes / self.n / self.payload))


def ring_allreduce(n: int, coll_id: int) -> list[Transfer]:
    out = []
    for s in range(2 * (n - 1)):
        for r in range(n):
            chunk = (r - s) % n if s < n - 1 else (r + 1 - (s - (n - 1))) % n
            after = () if s == 0 else ((coll_id, s - 1, (r - 1) % n),)
            out.append(Transfer(coll_id, s, r, (r + 1) % n, (chunk,), after))
    return out


def hd_allreduce(n: int, coll_id: int) -> list[Transfer]:
    if n < 2 or n & (n - 1):
        raise ScheduleError(f"halving-doubling needs a power-of-two rank count, got {n}")
    k = n.bit_length() - 1
    out = []
    window = {r: (0, n) for r in range(n)}  # chunks [lo, hi) rank r is reducing
    # What a rank sends holds everything it has received so far (partial sums from every
    # earlier partner), so a step waits for all of the rank's earlier receives.
    received: dict[int, list[tuple[int, int, int]]] = {r: [] for r in range(n)}
    for i in range(k):  # recursive halving: keep the half on my side of the split
        d = n >> (i + 1)
        new_window = {}
        for r in range(n):
            lo, hi = window[r]
            mid = (lo + hi) // 2
            keep, give = ((lo, mid), (mid, hi)) if r & d == 0 else ((mid, hi), (lo, mid))
            out.append(Transfer(coll_id, i, r, r ^ d, tuple(range(*give)), tuple(received[r])))
            new_window[r] = keep
        window = new_window
        for r in range(n):
            received[r].append((coll_id, i, r ^ d))
    for j in range(k):  # recursive doubling: exchange everything I have, in reverse order
        d = 1 << j
        step = k + j
        new_window = {}
        for r in range(n):
            lo, hi = window[r]
            plo, phi = window[r ^ d]
            out.append(Transfer(coll_id, step, r, r ^ d, tuple(range(lo, hi)),
                                tuple(received[r])))
            new_window[r] = (min(lo, plo), max(hi, phi))
        window = new_window
        for r in range(n):
            received[r].append((coll_id, step, r ^ d))
    return out


def alltoall(n: int, coll_id: int) -> list[Transfer]:
    return [Transfer(coll_id, k - 1, r, (r + k) % n, ((r + k) % n,))
            for k in range(1, n) for r in range(n)]


def incast(n: int, coll_id: int, root: int = 0) -> list[Transfer]:
    return [Transfer(coll_id, 0, r, root, tuple(range(n))) for r in range(n) if r != root]


def permutation(n: int, coll_id: int, perm: Sequence[int] | None = None) -> list[Transfer]:
    perm = list(perm) if perm is not None else [(r + n // 2) % n for r in range(n)]
    if sorted(perm) != list(range(n)) or any(perm[r] == r for r in range(n)):
        raise ScheduleError(f"a permutation of {n} ranks with no fixed point, got {perm}")
    return [Transfer(coll_id, 0, r, perm[r], tuple(range(n))) for r in range(n)]


ALGORITHMS: dict[str, Callable[..., list[Transfer]]] = {
    "ring_allreduce": ring_allreduce, "hd_allreduce": hd_allreduce, "alltoall": alltoall,
    "incast": incast, "permutation": permutation,
}

# nccl-tests' bus bandwidth factor: busbw = algbw * factor(n)
BUSBW_FACTOR: dict[str, Callable[[int], float]] = {
    "ring_allreduce": lambda n: 2 * (n - 1) / n, "hd_allreduce": lambda n: 2 * (n - 1) / n,
    "alltoall": lambda n: (n - 1) / n, "incast": lambda n: 1.0, "permutation": lambda n: 1.0,
}


def schedule(spec: CollectiveSpec) -> list[Transfer]:
    """Every transfer of every repetition, repetition k+1 chained after k at each rank."""
    if spec.algorithm not in ALGORITHMS:
        raise ScheduleError(f"unknown algorithm {spec.algorithm!r}; expected one of "
                            f"{sorted(ALGORITHMS)}")
    if spec.n < 2:
        raise ScheduleError(f"a collective needs at least 2 ranks, got {spec.n}")
    out: list[Transfer] = []
    last_recvs: dict[int, list[tuple[int, int, int]]] = {}
    for rep in range(spec.reps):
        coll_id = spec.coll_id + rep
        extra = {"root": spec.root} if spec.algorithm == "incast" else \
            {"perm": spec.perm} if spec.algorithm == "permutation" else {}
        transfers = ALGORITHMS[spec.algorithm](spec.n, coll_id, **extra)
        first_step = min(t.step for t in transfers)
        for t in transfers:
            if t.step == first_step and last_recvs.get(t.src):
                t = Transfer(t.coll_id, t.step, t.src, t.dst, t.chunks,
                             t.after + tuple(last_recvs[t.src]))
            out.append(t)
        last_recvs = {}
        for t in transfers:
            last_recvs.setdefault(t.dst, []).append(t.key)
    return out


def rank_workload(spec: CollectiveSpec, transfers: Sequence[Transfer], rank: int,
                  names: Sequence[str]) -> dict:
    """One rank's FLOWS.json naming its peers (`names` in rank order): the NIC learns
    their addresses from the SA at start (traffic/addressing.py)."""
    fpc = spec.chunk_frames
    first_step: dict[int, int] = {}
    for t in transfers:
        first_step[t.coll_id] = min(first_step.get(t.coll_id, t.step), t.step)
    flows = [{
        "flow": spec.flow_base + t.src * spec.n + t.dst, "dst": names[t.dst],
        "payload": spec.payload, "coll_id": t.coll_id, "step": t.step,
        "chunks": list(t.chunks), "frames_per_chunk": fpc,
        "after": [[c, s, names[src]] for c, s, src in t.after],
        **({"compute_s": spec.compute_s}
           if spec.compute_s > 0 and t.step == first_step[t.coll_id] else {}),
    } for t in transfers if t.src == rank]
    recvs = [{"coll_id": t.coll_id, "step": t.step, "src": names[t.src],
              "frames": len(t.chunks) * fpc} for t in transfers if t.dst == rank]
    return {"name": names[rank], "addresses": SA_ADDRESSES, "sl": spec.sl,
            "flows": flows, "recvs": recvs,
            "collective": {"algorithm": spec.algorithm, "n": spec.n, "rank": rank,
                           "message_bytes": spec.message_bytes, "reps": spec.reps,
                           "coll_ids": [spec.coll_id + i for i in range(spec.reps)]}}


def rank_flows(spec: CollectiveSpec, transfers: Sequence[Transfer], rank: int,
               book: Sequence[Endpoint]) -> dict:
    """One rank's FLOWS.json with every address filled in from `book` (NICs that run
    without an SA): rank_workload resolved as the SA would."""
    work = rank_workload(spec, transfers, rank, [ep.name for ep in book])
    peers = {ep.name: Peer(ep.name, ep.lid, ep.mac, ep.sl) for ep in book}
    out = resolve(work, book[rank].lid, peers)
    out["mac"] = book[rank].mac
    return out


def write_flow_files(spec: CollectiveSpec, book: Sequence[Endpoint],
                     out_dir: Path | str, via_sa: bool = False) -> dict[str, Path]:
    """One FLOWS.json per rank (NAME.flows.json) for `python -m traffic.nic_cli --flows`:
    addressed from `book`, or with `via_sa` naming hosts only (the NICs ask the SA)."""
    if len(book) != spec.n:
        raise ScheduleError(f"address book has {len(book)} hosts for {spec.n} ranks")
    transfers = schedule(spec)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    names = [ep.name for ep in book]
    paths = {}
    for rank, ep in enumerate(book):
        path = out_dir / f"{ep.name}.flows.json"
        data = (rank_workload(spec, transfers, rank, names) if via_sa
                else rank_flows(spec, transfers, rank, book))
        path.write_text(json.dumps(data, indent=1) + "\n")
        paths[ep.name] = path
    return paths


def address_book(entries: Mapping[str, tuple]) -> list[Endpoint]:
    """[Endpoint] in rank order from {host: (lid, mac)} or {host: (lid, mac, sl)}
    (rank = position in the mapping)."""
    return [Endpoint(name, *entry) for name, entry in entries.items()]
