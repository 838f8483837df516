"""The live view's snapshot and event JSON (controller/liveview/model.py), from readings
made up here: rates, utilisation, blocked / paused ports, buffers, link state."""

from __future__ import annotations

import json

from controller.liveview import model
from controller.liveview.model import SwitchReading
from controller.liveview.state import LiveState
from topologies.generators import build

FABRIC = build("leafspine:2,2,1")  # leaves s1, s2 (port 1: host, 2: s3, 3: s4); spines s3, s4
SECOND = 1_000_000_000


def reading(switch: str, t_s: float, **fields) -> SwitchReading:
    ports = [p for p, _peer, _pp in FABRIC.neighbours(switch)]
    base = {"tx": dict.fromkeys(ports, 0), "rx": dict.fromkeys(ports, 0),
            "pause_rx": dict.fromkeys(ports, 0), "pause_tx": dict.fromkeys(ports, 0),
            "drops": {p: {} for p in ports}, "blocked_ns": dict.fromkeys(ports, 0),
            "blocked_now": dict.fromkeys(ports, False), "buffer": dict.fromkeys(ports, 0),
            "queued": dict.fromkeys(ports, 0), "down": frozenset(), "mode": "CREDIT"}
    for key, value in fields.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            base[key] = {**base[key], **value}
        else:
            base[key] = value
    return SwitchReading(switch, int(t_s * SECOND), **base)


def quiet(t_s: float) -> dict[str, SwitchReading]:
    return {sw.name: reading(sw.name, t_s) for sw in FABRIC.switches}


def test_fabric_json_lists_every_node_and_cable_with_its_rate():
    doc = model.fabric_json(FABRIC)
    assert doc["schema"] == model.SCHEMA and doc["fabric"] == "leafspine:2,2,1"
    assert {n["id"] for n in doc["nodes"]} == {"s1", "s2", "s3", "s4", "h1", "h2"}
    assert {n["kind"] for n in doc["nodes"] if n["id"].startswith("s")} == {"switch"}
    ids = {lk["id"] for lk in doc["links"]}
    assert len(ids) == len(FABRIC.links) == 6
    assert "s1:2-s3:1" in ids
    assert all(lk["rate_pps"] == FABRIC.links[0].params.rate_pps for lk in doc["links"])
    json.dumps(doc)  # JSON as is


def test_rates_and_utilisation_come_from_counter_deltas_over_the_interval():
    rate = FABRIC.links[0].params.rate_pps
    before = quiet(10.0)
    after = quiet(10.5)
    after["s1"] = reading("s1", 10.5, tx={2: rate // 4}, rx={1: rate // 2})  # half a second
    snap = model.snapshot(FABRIC, 2, after, before)
    s1_up = snap["ports"]["s1:2"]
    assert s1_up["tx_pps"] == rate / 2 and s1_up["util"] == 0.5
    # s1 -> s3 is s1's transmit side; h1 -> s1 is seen as s1's receive counter
    assert snap["links"]["s1:2-s3:1"]["util"] == [0.5, 0.0]
    host_link = next(lk for lk in FABRIC.links if "h1" in (lk.a, lk.b))
    from_host = 0 if host_link.a == "h1" else 1  # util is [a -> b, b -> a]
    util = snap["links"][model.link_id(host_link)]["util"]
    assert util[from_host] == 1.0 and util[1 - from_host] == 0.0
    assert snap["links"]["s1:2-s3:1"]["state"] == "up"
    json.dumps(snap)


def test_first_snapshot_has_state_but_no_rates():
    snap = model.snapshot(FABRIC, 1, quiet(1.0), {})
    port = snap["ports"]["s1:2"]
    assert port["tx_pps"] is None and port["util"] is None and port["drops_new"] is None
    assert port["drops"] == 0  # a total: known from the first reading
    assert port["down"] is False and port["buffer"] == 0
    assert snap["switches"]["s1"]["mode"] == "CREDIT"


def test_a_port_marked_down_or_reported_to_the_sm_is_a_failed_link():
    after = quiet(2.0)
    after["s3"] = reading("s3", 2.0, down=frozenset({1}))
    snap = model.snapshot(FABRIC, 2, after, quiet(1.0))
    link = snap["links"]["s1:2-s3:1"]
    assert link["state"] == "down" and link["down_by"] == ["s3 port_liveness: port 1 down"]
    assert snap["switches"]["s3"]["ports_down"] == [1]
    only_sm = model.snapshot(FABRIC, 2, quiet(2.0), quiet(1.0), sm_failed={"s2:3-s4:2"})
    assert only_sm["links"]["s2:3-s4:2"]["state"] == "down"
    assert only_sm["links"]["s2:3-s4:2"]["down_by"] == ["SM: reported down by an agent"]


def test_blocked_paused_and_buffered_ports():
    before = quiet(1.0)
    after = quiet(2.0)
    after["s1"] = reading("s1", 2.0, blocked_ns={2: SECOND // 4}, buffer={1: 7},
                          blocked_now={2: True})
    after["s2"] = reading("s2", 2.0, pause_rx={3: 5}, drops={1: {"tail": 2, "no_route": 1}},
                          queued={1: 2})
    snap = model.snapshot(FABRIC, 2, after, before)
    blocked = snap["ports"]["s1:2"]
    assert blocked["blocked"] is True and blocked["blocked_share"] == 0.25
    assert snap["ports"]["s1:1"]["buffer"] == 7 and snap["switches"]["s1"]["buffer"] == 7
    paused = snap["ports"]["s2:3"]
    assert paused["paused"] is True and paused["pause_rx"] == 5 and paused["blocked"] is False
    drops = snap["ports"]["s2:1"]
    assert drops["drops"] == 3 and drops["drops_new"] == 3 and drops["queued"] == 2
    assert drops["drop_reasons"] == {"tail": 2, "no_route": 1}
    assert snap["switches"]["s1"]["blocked_ports"] == [2]
    assert snap["switches"]["s2"]["blocked_ports"] == [3]
    assert snap["links"]["s1:2-s3:1"]["blocked"] == [True, False]


def test_registers_a_switch_cannot_read_are_none_and_said_once():
    after = quiet(2.0)
    why = "Read failed: UNIMPLEMENTED: register reads"
    for name in ("s3", "s4"):
        after[name] = reading(name, 2.0, blocked_ns=None, blocked_now=None, buffer=None,
                              queued=None, registers_unread=why)
    snap = model.snapshot(FABRIC, 2, after, quiet(1.0))
    port = snap["ports"]["s3:1"]
    assert port["blocked"] is None and port["buffer"] is None and port["tx_pps"] == 0.0
    assert snap["switches"]["s3"]["registers_unread"] == why
    assert len(snap["unavailable"]) == 1
    assert "s3, s4" in snap["unavailable"][0] and why in snap["unavailable"][0]


def test_a_switch_that_does_not_answer_leaves_its_links_to_the_other_end():
    after = quiet(2.0)
    after["s3"] = SwitchReading("s3", 2 * SECOND, error="Read failed: UNAVAILABLE")
    snap = model.snapshot(FABRIC, 2, after, quiet(1.0))
    assert snap["switches"]["s3"] == {"reachable": False, "error": "Read failed: UNAVAILABLE"}
    assert "s3:1" not in snap["ports"]
    assert snap["links"]["s1:2-s3:1"]["state"] == "up"  # s1 still answers for its end
    assert snap["links"]["s1:2-s3:1"]["util"] == [0.0, None]


def test_counters_that_went_backwards_count_as_zero_not_negative():
    before = quiet(1.0)
    before["s1"] = reading("s1", 1.0, tx={2: 1000})
    snap = model.snapshot(FABRIC, 2, quiet(2.0), before)
    assert snap["ports"]["s1:2"]["tx_pps"] == 0.0


def test_changes_name_links_down_and_up_switches_lost_and_ports_blocked():
    first = model.snapshot(FABRIC, 1, quiet(1.0), {})
    assert model.changes(None, first) == []
    after = quiet(2.0)
    after["s1"] = reading("s1", 2.0, down=frozenset({2}), blocked_now={3: True},
                          drops={1: {"no_route": 4}})
    after["s4"] = SwitchReading("s4", 2 * SECOND, error="UNAVAILABLE")
    second = model.snapshot(FABRIC, 2, after, quiet(1.0))
    events = model.changes(first, second)
    kinds = {(e["kind"], e["severity"]) for e in events}
    assert ("link", "error") in kinds and ("switch", "error") in kinds
    assert ("flow_control", "warn") in kinds and ("drops", "warn") in kinds
    dropped = next(e for e in events if e["kind"] == "drops")
    assert dropped["text"] == "port s1:1 dropped 4 frames (4 so far: no_route 4)"
    down = next(e for e in events if e["kind"] == "link")
    assert down["link"] == "s1:2-s3:1" and "port 2 down" in down["text"]
    assert down["t_ns"] == second["t_ns"]
    third = model.snapshot(FABRIC, 3, quiet(3.0) | {"s1": reading(
        "s1", 3.0, drops={1: {"no_route": 4}})}, after)
    back = model.changes(second, third)
    assert {e["text"] for e in back} >= {"link s1:2-s3:1 up again", "s4 answers again",
                                         "port s1:3 moving again"}
    assert model.changes(third, model.snapshot(FABRIC, 4, quiet(4.0) | {"s1": reading(
        "s1", 4.0, drops={1: {"no_route": 4}})}, quiet(3.0))) == []  # no new drops


def test_an_sm_timeline_record_becomes_one_event():
    record = {"event": "port_down", "switch": "s1", "port": 2, "detected_ns": 100,
              "switchover_ns": 900_100, "sm_received_ns": 2_000_000, "switchover_ms": 0.9,
              "link": "s1:2-s3:1", "global_reroute_ms": 41.7, "entries_written": 6}
    event = model.sm_event(record)
    assert event["kind"] == "sm" and event["severity"] == "warn" and event["link"] == "s1:2-s3:1"
    assert event["t_ns"] == 2_000_000 and event["record"] == record
    assert "fast reroute switchover 0.9 ms" in event["text"]
    assert "global reroute done 42 ms" in event["text"] and "6 entries" in event["text"]
    told = model.sm_event({**record, "sa_changed_paths": 2, "sa_reports_sent": 3})
    assert told["text"].endswith("; hosts told of 2 changed paths (3 SA REPORT frames)")
    failed = model.sm_event({**record, "error": "route install failed on s3"})
    assert failed["severity"] == "error" and "route install failed on s3" in failed["text"]
    known = model.sm_event({"event": "port_down", "switch": "s3", "port": 1,
                            "detected_ns": 5, "note": "already known"})
    assert "already known" in known["text"] and known["t_ns"] == 5


def test_live_state_numbers_events_and_ties_them_to_the_sample(tmp_path):
    state = LiveState(model.fabric_json(FABRIC), tmp_path / "liveview.jsonl")
    state.add_events([model.event("sm", "info", "up", 1)])
    snap = model.snapshot(FABRIC, 1, quiet(1.0), {})
    state.publish(snap, [model.event("link", "error", "down", 2, link="x")])
    events, last = state.events_since(0)
    assert last == 2 and [e["seq"] for e in events] == [1, 2]
    assert [e["sample"] for e in events] == [0, 1] and events[1]["kind"] == "link"
    assert state.events_since(1)[0] == events[1:] and state.events_since(2) == ([], 2)
    assert state.snapshot() is snap
    lines = [json.loads(x) for x in (tmp_path / "liveview.jsonl").read_text().splitlines()]
    assert [line["kind"] for line in lines] == ["fabric", "event", "snapshot", "event"]
    assert lines[3]["kind_of"] == "link" and lines[3]["seq"] == 2
