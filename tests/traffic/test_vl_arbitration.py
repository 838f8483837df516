"""The VL arbiter against InfiniBand's VLArbitrationTable definition."""

from collections import Counter

import pytest

from traffic.vl_arbitration import VlArbiter, VlArbitration, VlArbitrationError


def send(arbiter: VlArbiter, ready: int, sizes: dict[int, int], packets: int) -> list[int]:
    """Run the arbiter for `packets` transmissions with VLs in `ready` always backlogged."""
    order = []
    for _ in range(packets):
        vl = arbiter.pick(ready)
        assert vl >= 0
        arbiter.charge(vl, sizes[vl])
        order.append(vl)
    return order


def test_weights_are_64_byte_units_shared_by_bytes():
    arb = VlArbiter(VlArbitration(low=((0, 4), (1, 1))))
    order = send(arb, 0b11, {0: 64, 1: 64}, 50)
    assert order[:5] == [0, 0, 0, 0, 1]
    assert Counter(order) == {0: 40, 1: 10}


def test_a_packet_starts_while_weight_remains_and_is_charged_in_full():
    # 256-byte packets = 4 units: a weight of 4 sends one, a weight of 1 also sends one
    # (it may start with 1 unit left) and is overdrawn.
    arb = VlArbiter(VlArbitration(low=((0, 4), (1, 1))))
    order = send(arb, 0b11, {0: 256, 1: 256}, 10)
    assert order == [0, 1] * 5
    # 100-byte packets = 2 units each: weight 4 sends two, then the next entry.
    arb = VlArbiter(VlArbitration(low=((0, 4), (1, 2))))
    assert send(arb, 0b11, {0: 100, 1: 100}, 6) == [0, 0, 1, 0, 0, 1]


def test_weight_zero_entry_is_skipped():
    arb = VlArbiter(VlArbitration(low=((0, 0), (1, 2), (2, 2))))
    order = send(arb, 0b111, {0: 64, 1: 64, 2: 64}, 40)
    assert 0 not in order
    assert Counter(order) == {1: 20, 2: 20}


def test_an_entry_whose_vl_has_nothing_gives_up_its_turn():
    arb = VlArbiter(VlArbitration(low=((0, 8), (1, 8))))
    assert send(arb, 0b10, {1: 64}, 3) == [1, 1, 1]
    assert arb.pick(0) == -1


def test_same_vl_in_several_entries_adds_its_turns():
    arb = VlArbiter(VlArbitration(low=((0, 1), (1, 1), (0, 1))))
    assert Counter(send(arb, 0b11, {0: 64, 1: 64}, 30)) == {0: 20, 1: 10}


def test_high_limit_bounds_high_bytes_while_low_waits():
    # limit 1 = 4096 bytes: four 1024-byte high packets, then one low packet.
    arb = VlArbiter(VlArbitration(high=((1, 255),), low=((0, 255),), high_limit=1))
    order = send(arb, 0b11, {0: 1024, 1: 1024}, 15)
    assert order == [1, 1, 1, 1, 0] * 3


def test_high_limit_zero_is_one_high_packet_per_low_opportunity():
    arb = VlArbiter(VlArbitration(high=((1, 255),), low=((0, 255),), high_limit=0))
    assert send(arb, 0b11, {0: 64, 1: 64}, 8) == [1, 0] * 4


def test_high_limit_255_is_unbounded_and_starves_low():
    arb = VlArbiter(VlArbitration(high=((1, 1),), low=((0, 255),), high_limit=255))
    assert set(send(arb, 0b11, {0: 64, 1: 4096}, 100)) == {1}


def test_high_limit_counts_only_while_low_waits():
    arb = VlArbiter(VlArbitration(high=((1, 255),), low=((0, 255),), high_limit=1))
    send(arb, 0b10, {1: 1024}, 10)  # low idle: no debt accumulates
    assert send(arb, 0b11, {0: 1024, 1: 1024}, 5) == [1, 1, 1, 1, 0]


def test_low_table_serves_when_high_has_nothing_ready():
    arb = VlArbiter(VlArbitration(high=((1, 10),), low=((0, 1),), high_limit=255))
    assert send(arb, 0b01, {0: 64}, 3) == [0, 0, 0]


def test_gradient_favoured_weights_give_the_expected_byte_share():
    # what the checkpoint-vs-allreduce policy does: VL0 gradient 224, VL1 checkpoint 32
    arb = VlArbiter(VlArbitration(low=((0, 224), (1, 32))))
    order = send(arb, 0b11, {0: 1024, 1: 1024}, 800)
    share = Counter(order)[0] / len(order)
    assert share == pytest.approx(224 / 256, abs=0.02)


@pytest.mark.parametrize("kwargs, message", [
    ({"low": ((15, 1),)}, "VL 15 is not a data VL"),
    ({"low": ((0, 256),)}, "weight 256"),
    ({"low": ((0, 1),), "high_limit": 256}, "high_limit 256"),
    ({"low": ((0, 0), (1, 0))}, "weight 0"),
    ({"low": tuple((0, 1) for _ in range(65))}, "65 entries"),
])
def test_tables_infiniband_would_refuse_are_refused(kwargs, message):
    with pytest.raises(VlArbitrationError, match=message):
        VlArbitration(**kwargs)


def test_round_trips_through_a_dict():
    cfg = VlArbitration(high=((2, 3),), low=((0, 4), (1, 1)), high_limit=6)
    assert VlArbitration.from_dict(cfg.as_dict()) == cfg
    with pytest.raises(VlArbitrationError):
        VlArbitration.from_dict({"low": [["x", 1]]})


def test_a_vl_no_entry_serves_is_never_picked_nor_charged():
    arb = VlArbiter(VlArbitration(low=((0, 1), (1, 1))))
    assert not arb.serves(3) and arb.serves(1)
    assert arb.pick(0b1000) == -1
    assert arb.pick(0b0011) == 0
    arb.charge(3, 4096)  # a caller's fallback sent VL 3: the table's state is untouched
    arb.charge(0, 64)
    assert send(arb, 0b11, {0: 64, 1: 64}, 4) == [1, 0, 1, 0]
