"""Collective schedules: who sends which chunk to whom, after what."""

from __future__ import annotations

import functools

import pytest

from traffic.collectives import (
    CollectiveSpec,
    Endpoint,
    ScheduleError,
    Transfer,
    alltoall,
    hd_allreduce,
    incast,
    permutation,
    rank_flows,
    ring_allreduce,
    schedule,
)


def final_contributions(transfers: list[Transfer], n: int) -> dict[tuple[int, int], frozenset]:
    """(rank, chunk) -> ranks whose data it holds at the end, each send carrying only what
    its sender had received through the transfers it waited for (its `after` closure)."""
    by_key = {t.key + (t.dst,): t for t in transfers}
    into = {}
    for t in transfers:
        into.setdefault(t.key, []).append(t)

    @functools.cache
    def carried(t: Transfer, chunk: int) -> frozenset:
        have = {t.src}
        for dep in t.after:
            for d in into.get(dep, ()):
                if d.dst == t.src and chunk in d.chunks:
                    have |= carried(d, chunk)
        return frozenset(have)

    assert len(by_key) == len(transfers)
    result = {}
    for r in range(n):
        for c in range(n):
            have = {r}
            for t in transfers:
                if t.dst == r and c in t.chunks:
                    have |= carried(t, c)
            result[(r, c)] = frozenset(have)
    return result


@pytest.mark.parametrize("n", [2, 3, 4, 5, 8])
def test_ring_allreduce_takes_2_n_minus_1_steps_and_leaves_every_chunk_fully_reduced(n):
    transfers = ring_allreduce(n, coll_id=1)
    assert {t.step for t in transfers} == set(range(2 * (n - 1)))
    assert all(t.dst == (t.src + 1) % n and len(t.chunks) == 1 for t in transfers)
    for r in range(n):  # each rank sends and receives one chunk per step
        assert sorted(t.step for t in transfers if t.src == r) == list(range(2 * (n - 1)))
        assert sorted(t.step for t in transfers if t.dst == r) == list(range(2 * (n - 1)))
    everyone = frozenset(range(n))
    assert set(final_contributions(transfers, n).values()) == {everyone}


def test_ring_step_waits_for_the_chunk_it_forwards():
    transfers = {t.key: t for t in ring_allreduce(4, coll_id=7)}
    t = transfers[(7, 3, 2)]  # rank 2, first all-gather step
    assert t.after == ((7, 2, 1),)
    assert t.chunks == transfers[(7, 2, 1)].chunks  # forwards what arrived from rank 1
    assert transfers[(7, 0, 0)].after == ()


@pytest.mark.parametrize("n", [2, 4, 8, 16])
def test_halving_doubling_takes_2_log2_n_steps_and_reduces_everything(n):
    transfers = hd_allreduce(n, coll_id=1)
    k = n.bit_length() - 1
    assert {t.step for t in transfers} == set(range(2 * k))
    for i in range(k):  # halving: n/2^(i+1) chunks to partner r xor n/2^(i+1)
        step = [t for t in transfers if t.step == i]
        assert all(t.dst == t.src ^ (n >> (i + 1)) and len(t.chunks) == n >> (i + 1)
                   for t in step)
    assert sum(len(t.chunks) for t in transfers if t.src == 0) == 2 * (n - 1)
    everyone = frozenset(range(n))
    assert set(final_contributions(transfers, n).values()) == {everyone}


def test_halving_doubling_refuses_a_non_power_of_two():
    with pytest.raises(ScheduleError, match="power-of-two"):
        hd_allreduce(6, coll_id=1)


def test_alltoall_sends_chunk_d_to_rank_d_from_everyone_without_dependencies():
    n = 5
    transfers = alltoall(n, coll_id=1)
    assert sorted((t.src, t.dst) for t in transfers) == \
        sorted((s, d) for s in range(n) for d in range(n) if s != d)
    assert all(t.chunks == (t.dst,) and t.after == () for t in transfers)


def test_incast_and_permutation():
    assert sorted(t.src for t in incast(4, 1, root=2)) == [0, 1, 3]
    assert all(t.dst == 2 for t in incast(4, 1, root=2))
    assert [t.dst for t in permutation(4, 1)] == [2, 3, 0, 1]
    with pytest.raises(ScheduleError):
        permutation(3, 1, perm=[0, 2, 1])  # rank 0 would send to itself


def test_repetitions_chain_at_each_rank():
    spec = CollectiveSpec("ring_allreduce", n=3, message_bytes=3000, reps=2, coll_id=10)
    transfers = schedule(spec)
    assert {t.coll_id for t in transfers} == {10, 11}
    first = [t for t in transfers if t.coll_id == 11 and t.step == 0 and t.src == 0][0]
    assert (10, 3, 2) in first.after  # rank 0's last receive of repetition 10 (from rank 2)


def test_rank_flows_are_what_the_nic_executes():
    spec = CollectiveSpec("ring_allreduce", n=4, message_bytes=4 * 2048, payload=1024)
    book = [Endpoint(f"h{i}", i + 1, f"02:00:00:00:00:{i + 1:02x}") for i in range(4)]
    flows = rank_flows(spec, schedule(spec), 1, book)
    assert spec.chunk_frames == 2
    assert len(flows["flows"]) == len(flows["recvs"]) == 6
    f = flows["flows"][1]
    assert (f["step"], f["dlid"], f["dst_mac"], f["frames_per_chunk"]) == (1, 3, book[2].mac, 2)
    assert f["after"] == [[1, 0, 1]]  # (coll, step 0, from LID 1 = rank 0)
    assert flows["recvs"][0] == {"coll_id": 1, "step": 0, "slid": 1, "frames": 2}
