"""The NICs of a run: one that died during the traffic makes the run an error naming it
and why, rather than a pass over the frames the others saw (a sender that died at its
first frame left a stream with 0 frames sent, 0 lost: pass); the unknown-DLID check's NIC
gets the time to send every frame it was asked to."""

from __future__ import annotations

from fabriclab.measure import failed_nics
from traffic.metrics import RunMetrics
from traffic.verdict import decide


def test_a_nic_without_a_summary_is_an_error_naming_it():
    summaries = {"h1": {"name": "h1", "missing": True,
                        "problem": "traffic.nic: error: [Errno 90] Message too long"},
                 "h2": {"name": "h2", "sent": 0}}
    error = failed_nics(summaries)
    assert error == ("NIC(s) failed during the traffic: h1: traffic.nic: error: [Errno 90] "
                     "Message too long")
    verdict = decide(RunMetrics(sent=0, received=0, error=error), lossless_expected=True)
    assert verdict.verdict == "error" and "h1" in verdict.reasons[0]


def test_nics_that_all_wrote_their_summary_are_no_error():
    assert failed_nics({"h1": {"name": "h1", "sent": 3}, "h2": {"name": "h2"}}) is None


def test_the_unknown_dlid_check_lasts_long_enough_to_send_every_frame():
    from fabriclab.traffic_run import check_duration_s

    assert check_duration_s(3, 500) == 10.0  # as before for the usual handful
    # 1100 frames at 100 frames/s: the NIC stopped after 10 s, and the check failed with
    # sent=1100, dropped_no_route=1000 (line:2, embedded switch)
    assert check_duration_s(1100, 100) >= 1100 / 100
