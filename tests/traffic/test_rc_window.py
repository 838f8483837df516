"""The RC window following the round trip (traffic/rc_window.py)."""

from __future__ import annotations

import pytest

from traffic.rc_window import MAX_DECREASE, DelayWindow

MS = 1_000_000


def test_it_starts_at_the_ceiling_and_grows_no_further_on_a_quiet_path():
    win = DelayWindow(128, 32, slack_ns=20 * MS)
    for i in range(50):
        win.sample(10 * MS, 16, i * MS, 10 * MS)
    assert win.frames == 128 and win.decreases == 0
    assert win.as_dict()["target_ms"] == 35.0  # 1.5 x 10 + 20


def test_a_standing_queue_shrinks_it_at_most_once_per_round_trip_and_never_below_the_floor():
    win = DelayWindow(128, 32)
    win.sample(10 * MS, 16, 0, None)  # the base round trip
    win.sample(200 * MS, 16, 1 * MS, 100 * MS)  # far over the target: halved at most
    assert win.frames == int(128 * MAX_DECREASE) and win.decreases == 1
    win.sample(200 * MS, 16, 50 * MS, 100 * MS)  # within the same round trip: not again
    assert win.decreases == 1
    for i in range(2, 20):
        win.sample(200 * MS, 16, i * 200 * MS, 100 * MS)
    assert win.frames == 32 and win.smallest == 32


def test_a_small_excess_shrinks_it_in_proportion_and_the_queue_gone_it_grows_back():
    win = DelayWindow(100, 10)
    win.sample(20 * MS, 10, 0, None)  # target 30 ms
    win.sample(40 * MS, 10, 1 * MS, 20 * MS)  # excess 10 of 40: x (1 - 0.8 x 0.25)
    assert win.frames == 80
    before = win.cwnd
    win.sample(25 * MS, 40, 2 * MS, 20 * MS)  # under the target: + acked / cwnd
    assert win.cwnd == pytest.approx(before + 40 / before)


def test_fixed_keeps_the_ceiling_whatever_the_round_trip():
    win = DelayWindow(128, 32, adaptive=False)
    win.sample(10 * MS, 16, 0, None)
    win.sample(900 * MS, 16, 1 * MS, 500 * MS)
    assert win.frames == 128 and win.as_dict()["control"] == "fixed"


def test_a_floor_above_the_ceiling_is_refused():
    with pytest.raises(ValueError, match="floor 64 must be >= 1 and <= the ceiling 32"):
        DelayWindow(32, 64)
