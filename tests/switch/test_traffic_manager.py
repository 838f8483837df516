"""The traffic manager on a virtual clock: depth, tail drop, rate, priority, delay."""

from __future__ import annotations

from p4switch.traffic_manager import TrafficManager

STD = {"enq_timestamp": 1, "enq_qdepth": 2, "deq_timedelta": 3, "deq_qdepth": 4,
       "egress_global_timestamp": 5, "priority": 6}


def make_tm(nprio: int = 1):
    tm = TrafficManager(priority_queues=nprio)
    tm.set_layout(STD)
    sent = []
    tm.egress = lambda port, S: S[0]
    tm.send = lambda port, frame: sent.append((port, frame)) or True
    return tm, sent


def pkt(name: bytes, prio: int = 0) -> list:
    return [name, 0, 0, 0, 0, 0, prio]


def test_full_queue_tail_drops_and_counts():
    tm, sent = make_tm()
    tm.set_params(1, rate_pps=1000, depth=3)
    for i in range(5):
        tm.enqueue(1, pkt(b"%d" % i), now=0.0)
    assert tm.port(1).drops.tail == 2  # departures happen on the timer, after these
    for t in (0.0, 0.001, 0.002, 0.003):
        tm.run_due(t)
    assert [f for _p, f in sent] == [b"0", b"1", b"2"]


def test_rate_spaces_departures_and_fills_queue_metadata():
    tm, sent = make_tm()
    tm.set_params(2, rate_pps=100)
    pkts = [pkt(b"a"), pkt(b"b"), pkt(b"c")]
    for p in pkts:
        tm.enqueue(2, p, now=0.0)
    times = []
    t = 0.0
    while tm.next_deadline() is not None:
        t = tm.next_deadline()
        tm.run_due(t)
        times.append(round(t, 6))
    assert times == [0.0, 0.01, 0.02]
    assert [p[2] for p in pkts] == [0, 1, 2]           # enq_qdepth
    assert [p[4] for p in pkts] == [2, 1, 0]           # deq_qdepth
    assert [p[3] for p in pkts] == [0, 10000, 20000]   # deq_timedelta, us
    assert len(sent) == 3


def test_strict_priority_serves_highest_queue_first():
    tm, sent = make_tm(nprio=8)
    tm.set_params(1, rate_pps=10)
    tm.enqueue(1, pkt(b"low0", 0), now=0.0)
    tm.run_due(0.0)
    tm.enqueue(1, pkt(b"low1", 0), now=0.01)
    tm.enqueue(1, pkt(b"high", 7), now=0.02)
    while tm.next_deadline() is not None:
        tm.run_due(tm.next_deadline())
    assert [f for _p, f in sent] == [b"low0", b"high", b"low1"]


def test_propagation_delay_holds_frames_on_the_wire():
    tm, sent = make_tm()
    tm.set_params(1, delay_us=500)
    tm.enqueue(1, pkt(b"x"), now=1.0)
    assert sent == [] and abs(tm.next_deadline() - 1.0005) < 1e-9
    tm.run_due(1.0005)
    assert sent == [(1, b"x")]


def test_down_port_drops_and_counts():
    tm, sent = make_tm()
    tm.port(1).up = False
    tm.enqueue(1, pkt(b"x"), now=0.0)
    assert sent == [] and tm.port(1).drops.port_down == 1


def test_idle_recirculation_backs_off_and_activity_resets():
    tm, _sent = make_tm()
    back = []
    tm.reinject = back.append
    delays = []
    now = 0.0
    for _ in range(8):
        tm.recirculate(pkt(b"r"), now)
        t = tm.next_deadline()
        delays.append(round((t - now) * 1e6))
        tm.run_due(t)
        now = t
    assert delays[0] == 50 and delays[-1] == 1000 and delays == sorted(delays)
    assert tm.recirculating() == 0 and len(back) == 8
    tm.note_activity(now)
    tm.recirculate(pkt(b"r"), now)
    assert round((tm.next_deadline() - now) * 1e6) == 50


def test_activity_never_adds_a_second_recirculation_server():
    """A frame arriving while packets are held brings the next pass forward; it
    must replace the pending recirculation timer, not add one (each extra timer
    would serve the buffer again, multiplying the recirculation rate)."""
    tm, _sent = make_tm()
    back = []
    tm.reinject = lambda S: (back.append(S), tm.recirculate(S, now))
    now = 0.0
    for _ in range(100):
        tm.recirculate(pkt(b"r"), now)
    for _step in range(2000):  # 1 s of virtual time, a frame every 0.5 ms
        now += 0.0005
        tm.note_activity(now)
        tm._quiet = True  # nothing else happened: still idle
        tm.run_due(now)
        assert sum(1 for t in tm.timers if t[2] == 2) <= 2  # _RECIRC: live + stale
    # Served like one port of recirc_rate (20000/s), never faster.
    assert len(back) <= 20000 * now * 1.05
    assert tm.recirculating() == 100


def drain(tm, until: float = 100.0) -> None:
    while tm.next_deadline() is not None and tm.next_deadline() <= until:
        tm.run_due(tm.next_deadline())


def test_vl_arbitration_shares_a_rate_limited_port_by_weight():
    from traffic.vl_arbitration import VlArbitration
    tm, sent = make_tm(nprio=8)
    tm.set_params(1, rate_pps=1000, depth=200)
    tm.set_vl_arbitration(1, VlArbitration(low=((0, 3), (1, 1))))
    for _i in range(100):
        tm.enqueue(1, pkt(b"g" + bytes(63), 0), now=0.0)  # 64 bytes = one weight unit
        tm.enqueue(1, pkt(b"c" + bytes(63), 1), now=0.0)
    drain(tm)
    first = [f[:1] for _p, f in sent[:80]]
    assert first.count(b"g") == 60 and first.count(b"c") == 20
    assert len(sent) == 200


def test_vl_arbitration_high_table_with_limit_still_lets_low_through():
    from traffic.vl_arbitration import VlArbitration
    tm, sent = make_tm(nprio=8)
    tm.set_params(1, rate_pps=1000, depth=100)
    tm.set_vl_arbitration(1, VlArbitration(high=((7, 255),), low=((0, 255),), high_limit=1))
    for _i in range(20):
        tm.enqueue(1, pkt(b"h" + bytes(1023), 7), now=0.0)
        tm.enqueue(1, pkt(b"l" + bytes(1023), 0), now=0.0)
    drain(tm)
    # strict priority would send all 20 high frames first; 4 KiB of high, then one low
    assert [f[:1] for _p, f in sent[:10]] == [b"h"] * 4 + [b"l"] + [b"h"] * 4 + [b"l"]


def test_vl_arbitration_naming_a_vl_without_a_queue_is_refused():
    import pytest

    from traffic.vl_arbitration import VlArbitration
    tm, _sent = make_tm(nprio=2)
    with pytest.raises(ValueError, match="priority queues"):
        tm.set_vl_arbitration(1, VlArbitration(low=((3, 1),)))
