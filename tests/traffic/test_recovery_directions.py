"""Recovery figures per direction of a failed link, and the agents' detection/switchover."""

from __future__ import annotations

from traffic import recovery
from traffic.nic_config import RECV_LOG_HEADER

DOWN = 10_000_000_000  # the fault, CLOCK_REALTIME ns
MS = 1_000_000


def _recv_log(path, rows):
    path.write_text(RECV_LOG_HEADER + "".join(
        f"{flow},{psn},0,{t},1,0,0,0,1\n" for flow, psn, t in rows))
    return path


def test_gaps_are_reported_per_direction_of_the_failed_link(tmp_path):
    paths = {1: ["h1-s1", "s1-s3", "s3-s2", "s2-h2"],  # up through the link
             2: ["h2-s2", "s2-s3", "s3-s1", "s1-h1"],  # down through it
             3: ["h3-s2", "s2-s4", "s4-s1", "s1-h1"]}  # elsewhere
    flows = {1: ("h1", 2), 2: ("h2", 1), 3: ("h3", 1)}
    # flow 1 silent 12 ms after the failure, flow 2 silent 140 ms, flow 3 never
    log = _recv_log(tmp_path / "h.recv.csv", [
        (1, 0, DOWN - MS), (1, 1, DOWN + 11 * MS), (1, 2, DOWN + 12 * MS),
        (2, 0, DOWN - 2 * MS), (2, 1, DOWN + 138 * MS),
        (3, 0, DOWN - MS), (3, 1, DOWN + MS)])
    out = recovery.recovery("s1-s3", DOWN, paths, flows, {"s1": {2: 3}}, [log])
    assert out["recovery_gap_by_direction"] == {"s1->s3": 12.0, "s3->s1": 140.0}
    assert out["recovery_gap_ms"] == 140.0
    assert out["recovery"]["1"].direction == "s1->s3" and out["recovery"]["1"].protected
    assert out["recovery"]["2"].direction == "s3->s1" and not out["recovery"]["2"].protected
    assert "3" not in out["recovery"]


def test_detection_and_switchover_come_from_both_ends_reports():
    timeline = [
        {"event": "port_down", "link": "s1:2-s3:1", "detected_ns": DOWN + 2 * MS,
         "switchover_ns": DOWN + 5 * MS},
        {"event": "port_down", "link": "s1:2-s3:1", "detected_ns": DOWN + 4 * MS,
         "switchover_ns": DOWN + 5 * MS, "note": "already known"},
        {"event": "port_down", "link": "s2:2-s3:2", "detected_ns": DOWN + 90 * MS,
         "switchover_ns": DOWN + 99 * MS},
    ]
    assert recovery.agent_timeline("s1:2-s3:1", DOWN, timeline) == {
        "detection_ms": 4.0, "switchover_ms": 3.0}
    failed = [dict(timeline[0], switchover_ns=0)]
    assert recovery.agent_timeline("s1:2-s3:1", DOWN, failed) == {
        "detection_ms": 2.0, "switchover_ms": None}
    assert recovery.agent_timeline("s9:1-s8:1", DOWN, timeline) == {
        "detection_ms": None, "switchover_ms": None}


def test_the_outage_ends_with_the_first_frame_sent_after_the_link_was_seen_down():
    cut = DOWN + 5 * MS
    frames = {7: [(DOWN - MS, DOWN - 2 * MS),        # before the failure
                  (DOWN + 3 * MS, DOWN - MS),        # already past the link: not the end
                  (DOWN + 30 * MS, DOWN + 25 * MS),  # sent after the cut: came another way
                  (DOWN + 200 * MS, DOWN + 199 * MS)],  # a later wait: not the fabric's
              8: [(DOWN - MS, DOWN - 2 * MS), (DOWN + MS, DOWN)],  # never resumed
              9: [(DOWN + MS, DOWN + 6 * MS)]}  # nothing before the failure
    assert recovery.outage_gaps(frames, DOWN, cut) == {7: 27.0, 8: None, 9: None}


def test_the_link_is_seen_down_by_its_first_agent():
    timeline = [{"event": "port_down", "link": "s1:2-s3:1", "detected_ns": DOWN + 4 * MS},
                {"event": "port_down", "link": "s1:2-s3:1", "detected_ns": DOWN + 2 * MS}]
    assert recovery.link_seen_down_ns("s1:2-s3:1", DOWN, timeline) == DOWN + 2 * MS
    assert recovery.link_seen_down_ns("s2:2-s3:2", DOWN, timeline) is None


def test_the_round_trip_is_the_flows_own_just_before_the_failure():
    frames = {1: [(DOWN - 150 * MS, DOWN - 250 * MS),  # outside the window
                  (DOWN - 50 * MS, DOWN - 60 * MS), (DOWN - 10 * MS, DOWN - 30 * MS),
                  (DOWN + 5 * MS, DOWN - 95 * MS)],  # after the failure: not counted
              2: [(DOWN - 5 * MS, DOWN - 9 * MS)]}
    assert recovery.round_trip_ms(frames, DOWN) == 30.0  # 2 x flow 1's mean of 10 and 20
    assert recovery.round_trip_ms({3: [(DOWN + MS, DOWN)]}, DOWN) is None
