"""The RC transport's retransmission timeout estimator (traffic/rc_rto.py)."""

from __future__ import annotations

import pytest

from traffic.rc_rto import RtoEstimator

MS = 1_000_000


def estimator(**kw) -> RtoEstimator:
    return RtoEstimator(initial_ns=100 * MS, floor_ns=10 * MS, ceiling_ns=800 * MS, **kw)


def test_before_any_sample_the_timeout_is_the_configured_one():
    est = estimator()
    assert est.rto_ns(0) == 100 * MS
    assert est.as_dict()["srtt_ms"] is None


def test_first_sample_sets_srtt_and_half_of_it_as_variation():
    est = estimator()
    est.sample(20 * MS)
    assert est.srtt_ns == 20 * MS and est.rttvar_ns == 10 * MS
    assert est.rto_ns(0) == 20 * MS + 4 * 10 * MS  # SRTT + 4 RTTVAR


def test_steady_round_trips_converge_to_the_floor():
    est = estimator()
    for _ in range(60):
        est.sample(2 * MS)
    assert est.srtt_ns == pytest.approx(2 * MS, rel=0.01)
    assert est.rttvar_ns < 0.1 * MS
    assert est.rto_ns(0) == 10 * MS  # SRTT + 4 RTTVAR ~ 2 ms is below the floor


def test_rfc6298_gains_one_eighth_and_one_quarter():
    est = estimator()
    est.sample(40 * MS)  # srtt 40, rttvar 20
    est.sample(80 * MS)
    assert est.rttvar_ns == 20 * MS + (40 * MS - 20 * MS) // 4  # 25 ms
    assert est.srtt_ns == 40 * MS + 40 * MS // 8  # 45 ms
    assert est.rto_ns(0) == 45 * MS + 4 * 25 * MS


def test_a_slow_path_is_followed_up_to_the_ceiling():
    est = estimator()
    for _ in range(40):
        est.sample(300 * MS)
    assert est.rto_ns(0) == pytest.approx(300 * MS, rel=0.05)  # the variation died out
    est.sample(900 * MS)
    assert est.rto_ns(0) == 800 * MS


def test_backoff_doubles_per_timeout_in_a_row_up_to_eight_times():
    est = estimator()
    est.sample(20 * MS)
    base = est.rto_ns(0)
    assert [est.rto_ns(k) for k in range(5)] == [base, 2 * base, 4 * base, 8 * base, 8 * base]


def test_fixed_mode_ignores_samples():
    est = estimator(adaptive=False)
    est.sample(1 * MS)
    assert est.rto_ns(0) == 100 * MS and est.samples == 1


def test_summary_view_in_milliseconds():
    est = estimator()
    est.sample(30 * MS)
    est.sample(10 * MS)
    d = est.as_dict()
    assert d["samples"] == 2 and d["min_rtt_ms"] == 10.0 and d["max_rtt_ms"] == 30.0
    assert d["rto_ms"] == pytest.approx((est.srtt_ns + 4 * est.rttvar_ns) / MS, abs=1e-3)


def test_a_floor_above_the_ceiling_is_refused():
    with pytest.raises(ValueError, match="floor"):
        RtoEstimator(initial_ns=MS, floor_ns=10 * MS, ceiling_ns=5 * MS)
