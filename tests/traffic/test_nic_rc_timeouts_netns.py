"""The RC transport's timeouts, two NICs back to back in throwaway namespaces (root).

* The retransmission timeout follows the measured round trip (traffic/rc_rto.py).
* A timeout while the sender's class is PFC-paused: "defer" waits for the link (no
  go-back, no retry counted) and then resends one frame per timeout (a probe);
  "retransmit" with go-back-N of the window, as RNICs do, counts the
  retransmissions while paused and exhausts the retry limit inside the pause.
* A flow that exhausts its retry limit is recorded (rc_failures) with its time and
  timeouts: what the training-job model charges an interruption on.

The peer storms pauses (pause_storm) and never acknowledges: its LID is not the
flows' DLID, so it takes none of their frames.
"""

from __future__ import annotations

import time

import pytest
from traffic_netns import NicProcess, namespace_pair

from traffic.sender import read_log

NS_TX, NS_RX = "nctrt-a", "nctrt-b"
RATE = 2000
START_LEAD_S = 1.0
STORM = (0.01, 1.0)  # the peer pauses the sender over this window (s after the start)
RETRY_LIMIT = 3
RTO_MS = 50  # fixed: timeouts 50, 100, 200, 400 ms apart (the backoff)


@pytest.fixture
def link():
    yield from namespace_pair(NS_TX, NS_RX)


def _run(link, tmp_path, tx_flows, *, rx_flows=None, tx_extra=(), mode="pfc", duration=3.5):
    tx_host, rx_host = link
    start = time.time() + START_LEAD_S
    rx = NicProcess(rx_host, mode, RATE, tmp_path, rx_flows or {
        "name": "rx", "transport": "rc",
        "actions": [[STORM[0], "pause_storm on"], [STORM[1], "pause_storm off"]]},
        duration, start, extra=("--storm-interval-ms", "2"))
    tx = NicProcess(tx_host, mode, RATE, tmp_path, {"name": "tx", "transport": "rc", **tx_flows},
                    duration, start, extra=tx_extra)
    try:
        rx.wait_ready()
        tx.wait_ready()
        return tx.wait(), rx.wait(), start
    finally:
        tx.kill()
        rx.kill()


def _unanswered(link, count=40):
    """A flow nobody acknowledges: to a DLID the peer does not have."""
    _tx, rx = link
    return {"flows": [{"flow": 9, "dst_mac": rx.mac, "dlid": rx.lid + 100, "count": count}]}


def rc_fixed(retry_limit: int = RETRY_LIMIT) -> tuple[str, ...]:
    return ("--rc-rto", "fixed", "--rc-timeout-ms", str(RTO_MS),
            "--rc-retry-limit", str(retry_limit))


RNIC = ("--rc-paused-timeouts", "retransmit", "--rc-timeout-resend", "window")  # as IB RNICs


def test_timeouts_while_paused_are_deferred_and_the_retry_limit_counts_after_the_pause(
        link, tmp_path):
    tx, _rx, start = _run(link, tmp_path, _unanswered(link),
                          tx_extra=(*rc_fixed(), "--rc-paused-timeouts", "defer"))
    rc, flow = tx["rc"], tx["rc_per_flow"]["9"]
    assert tx["flow_control"]["pauses_received"] > 100  # the storm held the sender
    # 1 s of pause at a 50 ms timeout: timeouts fired and were all deferred
    assert rc["timeouts_deferred"] >= 10 and flow["timeouts_deferred"] == rc["timeouts_deferred"]
    assert rc["retransmitted_while_paused"] == 0
    # after the pause, nobody answers: RETRY_LIMIT go-backs, then the flow fails
    assert rc["timeouts"] == RETRY_LIMIT + 1 and rc["flows_failed"] == 1
    # each timeout resent one frame (the probe: rc_timeout_resend), not the 40 of the window
    assert rc["timeout_probes"] == RETRY_LIMIT and rc["retransmitted"] == RETRY_LIMIT
    (failure,) = tx["rc_failures"]
    assert failure["flow"] == 9 and failure["timeouts"] == RETRY_LIMIT
    assert failure["t_ns"] > (start + STORM[1]) * 1e9
    retx_times = _retransmission_times(tmp_path)
    assert retx_times and min(retx_times) > (start + STORM[1]) * 1e9  # none while paused


def test_rnic_like_timeouts_count_while_paused_and_the_pause_exhausts_the_retry_limit(
        link, tmp_path):
    tx, _rx, start = _run(link, tmp_path, _unanswered(link),
                          tx_extra=(*rc_fixed(), *RNIC))
    rc = tx["rc"]
    assert rc["timeouts_deferred"] == 0 and rc["flows_failed"] == 1
    (failure,) = tx["rc_failures"]
    # timeouts at 50, 150, 350 ms went back, the 4th (750 ms) failed: inside the pause
    assert rc["go_backs"] == RETRY_LIMIT and failure["timeouts"] == RETRY_LIMIT
    assert (start + STORM[0]) * 1e9 < failure["t_ns"] < (start + STORM[1]) * 1e9
    assert rc["retransmitted"] == 0  # the go-backs' frames never got past the pause


def test_rnic_like_go_back_queued_in_a_pause_is_counted_when_it_goes_out(link, tmp_path):
    tx, _rx, start = _run(link, tmp_path, _unanswered(link, count=40),
                          tx_extra=(*rc_fixed(retry_limit=7), *RNIC))
    rc, flow = tx["rc"], tx["rc_per_flow"]["9"]
    # the go-back of the 750 ms timeout leaves when the pause ends: 40 frames
    assert rc["retransmitted_while_paused"] >= 40
    assert flow["retransmitted_while_paused"] == rc["retransmitted_while_paused"]
    first = min(_retransmission_times(tmp_path))
    assert first >= (start + STORM[1]) * 1e9 - 20e6  # nothing left while the pause held


def test_the_timeout_follows_the_measured_round_trip(link, tmp_path):
    tx_host, rx_host = link
    count = 400
    tx, rx, _start = _run(
        link, tmp_path,
        {"flows": [{"flow": 7, "dst_mac": rx_host.mac, "dlid": rx_host.lid, "count": count}]},
        rx_flows={"name": "rx", "transport": "rc",
                  "recvs": [{"coll_id": 0, "step": 0, "slid": tx_host.lid, "frames": count}]},
        mode="credit")
    rtt = tx["rc_per_flow"]["7"]["rtt"]
    assert rtt["adaptive"] and rtt["samples"] >= count // 16 - 1
    # an ACK covers 16 frames (8 ms at 2000 frames/s): the oldest one's wait is sampled
    assert 4 <= rtt["srtt_ms"] <= 40
    assert 10 <= rtt["rto_ms"] < 100  # the floor .. below the 100 ms initial timeout
    assert tx["rc"]["timeouts"] == 0 and tx["rc"]["retransmitted"] == 0
    assert rx["delivered"] == count


def _retransmission_times(tmp_path) -> list[int]:
    seen, out = set(), []
    for flow, psn, ts in read_log(tmp_path / "tx.sent.csv"):
        if (flow, psn) in seen:
            out.append(ts)
        seen.add((flow, psn))
    return out
