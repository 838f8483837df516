"""Reconciliation per frame kind, the verdict and the stall figures, from constructed counters
(no root, no Mininet)."""

from __future__ import annotations

import dataclasses

from traffic.metrics import CollectiveTime, RunMetrics, UnknownDlidCheck
from traffic.reconcile import reconcile
from traffic.stall import blocked_hosts, held_at_end, paused_ports
from traffic.verdict import decide


def _figures(**changes) -> dict:
    base = {"transmissions": 4491, "lost_in_fabric": 58, "ack_frames": 382, "nak_frames": 6,
            "pause_frames": 0, "credit_frames": 1344, "lost_on_failed_links": 44,
            "drops_by_reason": {"link_down": 37, "no_route": 26}}
    return {**base, **changes}


def _nics(acks=(217, 170), naks=(6, 0), credits=(699, 644), requests=(0, 1)) -> dict:
    return {f"h{i}": {"rc": {"acks_sent": a, "naks_sent": n},
                      "flow_control": {"credit_frames_received": c,
                                       "credit_requests_received": r}}
            for i, (a, n, c, r) in enumerate(zip(acks, naks, credits, requests), 1)}


def test_acks_the_switches_dropped_reconcile_what_looked_like_negative_loss():
    # the fattree:4 link failure: 58 data + 5 ACK frames lost, 63 drops counted
    rec = reconcile(_figures(), _nics(), failures=True)
    assert {k.kind: k.lost for k in rec.kinds}["rc_control"] == 5
    assert (rec.lost, rec.counted_drops, rec.unexplained, rec.problems) == (63, 63, 0, ())


def test_more_drops_counted_than_frames_lost_is_a_failed_check():
    # the pfc-storm report: 5 headroom drops, 2 frames lost in the fabric, no ACK lost
    figures = _figures(lost_in_fabric=2, ack_frames=387, lost_on_failed_links=None,
                       drops_by_reason={"headroom": 5})
    rec = reconcile(figures, _nics())
    assert rec.unexplained == -3
    assert "counted 5 drop(s), 3 more than the 2 frame(s) lost" in rec.problems[0]
    m = RunMetrics(reconciliation=rec, unexplained_loss=rec.unexplained, cct_ms=1.0)
    v = decide(m, lossless_expected=False)
    assert v.verdict == "fail" and v.reasons == rec.problems


def test_a_loss_nothing_explains_fails_and_a_failed_link_explains_its_window():
    lost = reconcile(_figures(lost_in_fabric=70, lost_on_failed_links=0), _nics())
    assert lost.unexplained == 12 and "12 frame(s) lost in the fabric" in lost.problems[0]
    on_link = reconcile(_figures(lost_in_fabric=70, lost_on_failed_links=12), _nics(),
                        failures=True)
    assert (on_link.on_failed_links, on_link.unexplained) == (12, 0)


def test_not_fabric_drops_explain_nothing_and_frames_held_at_the_end_do():
    rec = reconcile(_figures(lost_in_fabric=10, lost_on_failed_links=None,
                             drops_by_reason={"not_fabric": 4}, ack_frames=387),
                    _nics(), held_in_fabric=10)
    assert (rec.counted_drops, rec.held_in_fabric, rec.unexplained) == (0, 10, 0)


def test_link_local_frames_a_nic_took_but_its_capture_missed_are_named():
    rec = reconcile(_figures(credit_frames=1000), _nics(), failures=True)
    assert any("took 1344 credit frames" in p for p in rec.problems)
    ack = reconcile(_figures(ack_frames=400), _nics(), failures=True)
    assert any("13 more than the NICs sent" in p for p in ack.problems)


def test_without_usable_counters_there_is_nothing_to_reconcile():
    assert reconcile(_figures(drops_by_reason=None), _nics()) is None


def test_verdicts_and_their_reasons():
    ok = RunMetrics(sent=10, received=10, cct_ms=5.0, collectives={})
    assert decide(ok, lossless_expected=True).verdict == "pass"
    assert decide(dataclasses.replace(ok, lost=2), lossless_expected=True).verdict == "fail"
    assert decide(dataclasses.replace(ok, error="boom"), lossless_expected=True).reasons == (
        "boom",)
    bad = dataclasses.replace(ok, checks={"unknown_dlid": UnknownDlidCheck(1, 3, 2, "s1", 1,
                                                                           False)})
    v = decide(bad, lossless_expected=True)
    assert v.verdict == "fail" and "check unknown_dlid failed" in v.reasons[0]
    unfinished = RunMetrics(collectives={"1": CollectiveTime(2, False)}, lost=3)
    assert decide(unfinished, lossless_expected=False).verdict == "incomplete"
    stuck = dataclasses.replace(unfinished, blocked_hosts=("h1", "h3"), held_in_fabric=7)
    v = decide(stuck, lossless_expected=False)
    assert v.verdict == "stalled" and "h1, h3 blocked" in v.reasons[0]
    assert "still moving" in v.reasons[0]  # the run's time ran out, nothing stopped
    stopped = decide(dataclasses.replace(stuck, stalled_after_s=3.0), lossless_expected=False)
    assert stopped.reasons[0].startswith("the fabric stopped moving: nothing sent or "
                                         "received for 3 s; h1, h3 blocked")
    assert decide(dataclasses.replace(ok, partial=True, problems=("x",)),
                  lossless_expected=True) .verdict == "partial"


def _port(blocked=0, pauses=0, buffered=0, head=0, tail=0, classes=8) -> dict:
    def one(v):
        return [v] + [0] * (classes - 1)
    return {"blocked_ns": one(blocked), "pause_tx": one(pauses), "fc_buffer": one(buffered),
            "fc_queue_head": one(head), "fc_queue_tail": one(tail)}


def test_stall_spread_counts_ports_blocked_beyond_the_share_or_sending_pauses():
    telemetry = {"s1": {"2": _port(blocked=30_000_000), "3": _port(blocked=100)},
                 "s2": {"1": _port(pauses=4)}, "s3": {"error": "RpcError: unavailable"}}
    spread = paused_ports(telemetry, window_ns=1_000_000_000)
    assert [(p.switch, p.port, p.klass, p.blocked_ms, p.pauses_sent) for p in spread] == [
        ("s1", 2, 0, 30.0, 0), ("s2", 1, 0, 0.0, 4)]


def test_frames_held_at_the_end_by_buffer_and_by_gate_with_ticket_wraparound():
    telemetry = {"s1": {"1": _port(buffered=3), "2": _port(head=2**32 - 1, tail=1)}}
    held = held_at_end(telemetry)
    assert [(h.port, h.buffered, h.waiting) for h in held] == [(1, 3, 0), (2, 0, 2)]


def test_blocked_hosts_are_those_unfinished_with_frames_the_link_would_not_take():
    nics = {"h1": {"done": False, "flow_control": {"blocked_at_end": [0]}},
            "h2": {"done": True, "flow_control": {"blocked_at_end": [0]}},
            "h3": {"done": False, "flow_control": {"blocked_at_end": []}}}
    assert blocked_hosts(nics) == ("h1",)


def test_frames_lost_on_a_failed_link_do_not_fail_a_run_below_the_link_rate():
    ok = RunMetrics(sent=2000, received=1499, lost=501, lost_on_failed_links=501)
    assert decide(ok, lossless_expected=True).verdict == "pass"
    more = dataclasses.replace(ok, lost=510)
    assert decide(more, lossless_expected=True).reasons == (
        "9 frame(s) lost although every sender stayed below the link rate (besides 501 on "
        "failed links)",)


def test_a_collective_stopped_by_the_stall_timeout_says_so_without_blocked_hosts():
    quiet = RunMetrics(collectives={"1": CollectiveTime(2, False)}, stalled_after_s=1.0)
    assert decide(quiet, lossless_expected=True).reasons == (
        "a collective did not complete: nothing was sent or received for 1 s, and the run "
        "stopped it (stall_timeout_s)",)  # was "did not complete in time"
    slow = dataclasses.replace(quiet, stalled_after_s=None)
    assert decide(slow, lossless_expected=True).reasons == (
        "a collective did not complete in time",)
