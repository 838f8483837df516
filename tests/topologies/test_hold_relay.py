"""The hold relay (topologies/hold_relay.py): a bmv2 switch's held frames come back in
their queue's ticket order, paced, with a window per queue that a refusal closes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from topologies import hold_relay

HEADERS = Path(__file__).resolve().parents[2] / "p4src" / "include" / "headers.p4"


def _hold_t_layout() -> list[tuple[str, int]]:
    """hold_t's fields and widths, read from the P4 source the switch runs."""
    body = re.search(r"header hold_t \{(.*?)\}", HEADERS.read_text(), re.S).group(1)
    return [(name, int(width)) for width, name in re.findall(r"bit<(\d+)>\s+(\w+);", body)]


def frame(ticket: int | None, out_port: int = 3, cls: int = 0, payload: bytes = b"") -> bytes:
    values = {"magic": 0x484C, "has_ticket": int(ticket is not None), "ticket": ticket or 0,
              "out_port": out_port, "cls": cls, "is_data": 1, "held": 1,
              "arrival_ts": 0x123456789ABC, "verdict": 0xFFFFFFFF, "in_port": 511, "in_cls": 7}
    bits, total = 0, 0
    for name, width in _hold_t_layout():
        bits = (bits << width) | (values.get(name, 0) & ((1 << width) - 1))
        total += width
    assert total == hold_relay.HEADER_BYTES * 8
    return bits.to_bytes(hold_relay.HEADER_BYTES, "big") + b"\x02" * 14 + payload


def ticket_of(data: bytes) -> int | None:
    return hold_relay.parse(data)[1]


def drain(hold: hold_relay.OrderedHold, now: float) -> list[bytes]:
    out = []
    while (f := hold.release(now)) is not None:
        out.append(f)
    return out


def test_the_header_is_read_where_the_p4_program_writes_it():
    assert hold_relay.parse(frame(0xDEADBEEF, out_port=300, cls=5)) == ((300, 5), 0xDEADBEEF)
    assert hold_relay.parse(frame(None, out_port=2, cls=1)) == ((2, 1), None)
    assert hold_relay.parse(b"\x00" * 40) is None  # no magic
    assert hold_relay.parse(frame(1)[:19]) is None  # too short


def test_a_queue_comes_back_in_ticket_order_whatever_order_it_arrived_in():
    hold = hold_relay.OrderedHold(pace_pps=1000, burst=1)
    for t in (9, 5, 10, 15, 6, 16, 11):
        hold.arrive(frame(t), now=0.0)
    released, now = [], 0.0
    while len(released) < 7:
        now += 0.05  # long enough for the pace and for frames in flight to have left
        released += [ticket_of(f) for f in drain(hold, now)]
    assert released == [5, 6, 9, 10, 11, 15, 16]


def test_a_refused_frame_closes_its_queue_window_to_its_head_and_others_keep_going():
    hold = hold_relay.OrderedHold(pace_pps=1e6, burst=100)
    hold.queues.clear()
    for t in range(10):
        hold.arrive(frame(t, out_port=1), now=0.0)
    assert [ticket_of(f) for f in drain(hold, 0.0)] == [0]  # a window of one at first
    # not back within two round trips: it left; the window doubles each time
    assert [ticket_of(f) for f in drain(hold, 1.0)] == [1, 2]
    assert [ticket_of(f) for f in drain(hold, 2.0)] == [3, 4, 5, 6]
    # 4 comes back refused (its queue is blocked): the window closes to one
    hold.arrive(frame(4, out_port=1), now=2.001)
    assert hold.counts.refused == 1
    hold.arrive(frame(40, out_port=2), now=2.001)  # another queue is not held up
    assert [ticket_of(f) for f in drain(hold, 2.002)] == [40]  # 3, 5, 6 in flight
    for t in (5, 6):
        hold.arrive(frame(t, out_port=1), now=2.003)
    assert hold.counts.refused == 3
    assert [ticket_of(f) for f in drain(hold, 2.003)] == []  # 3 may still be refused
    # 3 never came back: it left, and the queue goes on from its head, window two
    assert [ticket_of(f) for f in drain(hold, 2.1)] == [4, 5]
    assert hold.waiting == 4 and hold.counts.frames_in == 10 + 1 + 1 + 2


def test_queues_share_the_pace_round_robin():
    hold = hold_relay.OrderedHold(pace_pps=100, burst=1, window_max=8)
    for t in range(3):
        hold.arrive(frame(t, out_port=1), now=0.0)
        hold.arrive(frame(t, out_port=2), now=0.0)
    ports, now = [], 0.0
    while len(ports) < 6:
        now += 0.0101
        ports += [hold_relay.parse(f)[0][0] for f in drain(hold, now)]
    assert ports[:4] in ([1, 2, 1, 2], [2, 1, 2, 1])
    assert now == pytest.approx(6 * 0.0101)  # one frame per 1/pace, never more


def test_the_pace_lets_a_burst_go_then_one_frame_per_period():
    hold = hold_relay.OrderedHold(pace_pps=500, burst=4, window_max=32)
    for _ in range(20):
        hold.arrive(frame(None), now=0.0)  # no ticket: no window, arrival order
    assert len(drain(hold, 0.0)) == 4
    assert len(drain(hold, 0.0)) == 0
    assert len(drain(hold, 0.002)) == 1  # 1/500 s later: one more
    assert hold.wait_s(0.002) == pytest.approx(0.002)


def test_frames_without_a_ticket_keep_their_arrival_order():
    hold = hold_relay.OrderedHold(pace_pps=1e6, burst=10)
    for n in range(5):
        hold.arrive(frame(None, payload=bytes([n])), now=0.0)
    assert [f[-1] for f in drain(hold, 0.0)] == [0, 1, 2, 3, 4]


def test_a_frame_without_a_hold_header_is_counted_and_dropped():
    hold = hold_relay.OrderedHold(pace_pps=100)
    hold.arrive(b"\xff" * 64, now=0.0)
    assert hold.counts.not_held == 1 and hold.counts.frames_in == 0
    assert hold.release(0.0) is None and hold.wait_s(0.0) is None


def test_a_pace_that_is_not_positive_is_refused():
    with pytest.raises(ValueError, match="not positive"):
        hold_relay.OrderedHold(pace_pps=0)


def test_a_relay_that_died_is_a_problem_of_the_run_naming_its_log():
    from fabriclab import runner

    class Net:
        def crashed_switches(self):
            return {}

        def crashed_relays(self):
            return {"s2": 1}

    metrics: dict = {}
    runner._crashes(Net(), metrics)
    assert metrics["problems"] == ["hold relay(s) died during the run, with the frames they "
                                   "held: s2 (exit 1, logs/s2.hold-relay.log)"]
    quiet: dict = {}
    runner._crashes(None, quiet)
    assert quiet == {}
