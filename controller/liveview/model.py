"""The live view's data: the fabric as drawn, one snapshot per sample, the event timeline.

Everything here is plain data in, JSON-ready dicts out, so the same functions
serve the live page, the recording a finished run replays, and the tests:

* `fabric_json(fabric)`: what is drawn (switches, hosts, cables, link rates); sent once.
* `SwitchReading`: what one switch answered over P4Runtime at one instant
  (cumulative counters, registers, the ports its `port_liveness` marks down).
* `snapshot(...)`: two consecutive readings of every switch -> per port and per link
  rates, utilisation, blocked / paused ports, buffer occupancy and link state.
* `changes(before, after)`: the events a new snapshot implies (a link went down,
  a switch stopped answering, a port became blocked).
* `sm_event(record)`: one record of the SM's reroute timeline as an event.

Schema `fabriclab.liveview/1` (docs/liveview.md lists every field).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from controller.readout import BLOCKED_QUANTUM_NS
from topologies import link_names
from topologies.description import Fabric, Link, NodeKind

SCHEMA = "fabriclab.liveview/1"


@dataclass(frozen=True)
class SwitchReading:
    """One switch's state as read at `t_ns` (wall clock). Counters are cumulative; a
    field is None where it was not read (registers a switch cannot read, a program
    without that array). `error` set: the switch did not answer, nothing else is."""

    switch: str
    t_ns: int
    tx: Mapping[int, int] = field(default_factory=dict)  # port -> frames sent
    rx: Mapping[int, int] = field(default_factory=dict)  # port -> frames received
    pause_rx: Mapping[int, int] = field(default_factory=dict)  # 802.1Qbb frames received
    pause_tx: Mapping[int, int] = field(default_factory=dict)
    drops: Mapping[int, Mapping[str, int]] | None = None  # port -> reason -> frames dropped
    blocked_ns: Mapping[int, int] | None = None  # port -> head-of-queue blocked time
    blocked_now: Mapping[int, bool] | None = None  # port -> a class's head waits now
    buffer: Mapping[int, int] | None = None  # port -> frames held for this input (fc_buffer)
    queued: Mapping[int, int] | None = None  # port -> frames queued for this output (LOSSY)
    down: frozenset[int] | None = None  # ports port_liveness marks down (fast reroute)
    mode: str | None = None  # flow-control mode: LOSSY, PFC, CREDIT
    registers_unread: str | None = None  # why the registers are missing
    error: str | None = None


def link_id(link: Link) -> str:
    """A link's id in the view: both ends with their ports (`s1:2-s3:1`)."""
    return link_names.port_pair(link)


def fabric_json(fabric: Fabric) -> dict:
    """The drawing's nodes and edges (static for a run)."""
    nodes = [{"id": n.name, "kind": n.kind.value, "tier": n.tier,
              **({"label": n.label} if n.label else {})} for n in fabric.nodes]
    links = [{"id": link_id(lk), "a": lk.a, "a_port": lk.a_port, "b": lk.b, "b_port": lk.b_port,
              "rate_pps": lk.params.rate_pps, "buffer_pkts": lk.params.buffer_pkts}
             for lk in fabric.links]
    return {"schema": SCHEMA, "fabric": fabric.name, "nodes": nodes, "links": links}


def _delta(cur: Mapping[int, int] | None, prev: Mapping[int, int] | None, port: int
           ) -> int | None:
    if cur is None or prev is None or port not in cur or port not in prev:
        return None
    return max(0, cur[port] - prev[port])  # a switch restarted: counters began again


def _rate(count: int | None, seconds: float) -> float | None:
    return None if count is None or seconds <= 0 else round(count / seconds, 1)


def _share(value: float | None, whole: float) -> float | None:
    return None if value is None or whole <= 0 else round(min(1.0, value / whole), 3)


def _drops(cur: Mapping | None, prev: Mapping | None, port: int) -> dict:
    """Drops at a port: the total so far, by reason, and how many since `prev`."""
    if cur is None or port not in cur:
        return {"drops": None, "drop_reasons": None, "drops_new": None}
    reasons = dict(cur[port])
    total = sum(reasons.values())
    before = None if prev is None or port not in prev else sum(prev[port].values())
    return {"drops": total, "drop_reasons": reasons,
            "drops_new": None if before is None else max(0, total - before)}


def port_state(cur: SwitchReading, prev: SwitchReading | None, port: int, rate_pps: int
               ) -> dict:
    """One switch port over the interval since `prev` (rates need both readings)."""
    ok = prev is not None and prev.error is None
    seconds = (cur.t_ns - prev.t_ns) / 1e9 if ok else 0.0
    last = prev if ok else None
    tx_pps = _rate(_delta(cur.tx, last and last.tx, port), seconds)
    blocked_delta = _delta(cur.blocked_ns, last and last.blocked_ns, port)
    blocked_share = _share(blocked_delta, seconds * 1e9)
    now = None if cur.blocked_now is None else cur.blocked_now.get(port, False)
    blocked = None if now is None and blocked_delta is None else \
        bool(now) or bool(blocked_delta)
    pause_rx = _delta(cur.pause_rx, last and last.pause_rx, port)
    return {
        "tx_pps": tx_pps, "rx_pps": _rate(_delta(cur.rx, last and last.rx, port), seconds),
        "util": _share(tx_pps, rate_pps),
        "blocked": blocked, "blocked_share": blocked_share,
        "paused": None if pause_rx is None else pause_rx > 0,
        "pause_rx": pause_rx, "pause_tx": _delta(cur.pause_tx, last and last.pause_tx, port),
        "buffer": None if cur.buffer is None else cur.buffer.get(port),
        "queued": None if cur.queued is None else cur.queued.get(port),
        **_drops(cur.drops, last and last.drops, port),
        "down": None if cur.down is None else port in cur.down,
    }


def _direction_util(fabric: Fabric, ports: dict, src: str, src_port: int, dst: str,
                    dst_port: int, rate_pps: int) -> float | None:
    """Utilisation from src to dst: src's transmit counter, else (a host sends) dst's
    receive counter."""
    if fabric.node(src).kind is NodeKind.SWITCH:
        return ports.get(f"{src}:{src_port}", {}).get("util")
    rx = ports.get(f"{dst}:{dst_port}", {}).get("rx_pps")
    return _share(rx, rate_pps)


def link_state(fabric: Fabric, link: Link, ports: dict, readings: Mapping[str, SwitchReading],
               sm_failed: Iterable[str]) -> dict:
    """A cable: up / down / unknown, who says it is down, utilisation each way."""
    down_by = []
    answered = False
    for node, port in ((link.a, link.a_port), (link.b, link.b_port)):
        reading = readings.get(node)
        if reading is None or reading.error is not None:
            continue
        answered = True
        if reading.down is not None and port in reading.down:
            down_by.append(f"{node} port_liveness: port {port} down")
    lid = link_id(link)
    if lid in set(sm_failed):
        down_by.append("SM: reported down by an agent")
    state = "down" if down_by else "up" if answered else "unknown"
    rate = link.params.rate_pps
    util = [_direction_util(fabric, ports, link.a, link.a_port, link.b, link.b_port, rate),
            _direction_util(fabric, ports, link.b, link.b_port, link.a, link.a_port, rate)]
    ends = [ports.get(f"{link.a}:{link.a_port}"), ports.get(f"{link.b}:{link.b_port}")]
    return {"state": state, "down_by": down_by, "util": util,
            "blocked": [None if e is None else e["blocked"] for e in ends],
            "paused": [None if e is None else e["paused"] for e in ends]}


def switch_state(reading: SwitchReading, ports: dict, wired: list[int]) -> dict:
    if reading.error is not None:
        return {"reachable": False, "error": reading.error}
    mine = [ports[f"{reading.switch}:{p}"] for p in wired]
    buffers = [p["buffer"] for p in mine if p["buffer"] is not None]
    queued = [p["queued"] for p in mine if p["queued"] is not None]
    return {"reachable": True, "error": None, "mode": reading.mode,
            "ports_down": sorted(reading.down & set(wired)) if reading.down is not None
            else None,
            "buffer": sum(buffers) if buffers else None,
            "queued": sum(queued) if queued else None,
            "blocked_ports": [p for p, s in zip(wired, mine) if s["blocked"] or s["paused"]],
            "registers_unread": reading.registers_unread}


def snapshot(fabric: Fabric, seq: int, readings: Mapping[str, SwitchReading],
             previous: Mapping[str, SwitchReading], sm_failed: Iterable[str] = ()) -> dict:
    """The state of the fabric over the interval between `previous` and `readings`."""
    sm_failed = set(sm_failed)
    ports: dict[str, dict] = {}
    switches: dict[str, dict] = {}
    for sw in fabric.switches:
        reading = readings.get(sw.name) or SwitchReading(sw.name, 0, error="not read")
        wired = [(lk.endpoint(sw.name)[0], lk) for lk in fabric.links_of(sw.name)]
        if reading.error is None:
            for port, lk in wired:
                ports[f"{sw.name}:{port}"] = port_state(reading, previous.get(sw.name), port,
                                                        lk.params.rate_pps)
        switches[sw.name] = switch_state(reading, ports, sorted(p for p, _ in wired))
    links = {link_id(lk): link_state(fabric, lk, ports, readings, sm_failed)
             for lk in fabric.links}
    times = [r.t_ns for r in readings.values() if r.error is None]
    return {"schema": SCHEMA, "seq": seq, "t_ns": max(times) if times else None,
            "switches": switches, "ports": ports, "links": links,
            "unavailable": unavailable(readings)}


def unavailable(readings: Mapping[str, SwitchReading]) -> list[str]:
    """What the page cannot show, and why, once per reason."""
    by_reason: dict[tuple[str, bool], list[str]] = {}
    for name, r in sorted(readings.items()):
        if r.error is None and r.registers_unread:
            derived = r.buffer is not None  # from the counters beside the registers
            by_reason.setdefault((r.registers_unread, derived), []).append(name)
    return [f"LOSSY queue length on {', '.join(names)}: registers not readable ({why}); "
            "buffer occupancy and blocked time derived from counters (blocked time in "
            f"{BLOCKED_QUANTUM_NS / 1e6:.1f} ms steps)" if derived else
            f"buffer occupancy and blocked (credit / pause) time on {', '.join(names)}: "
            f"registers not readable ({why})" for (why, derived), names in by_reason.items()]


# ----------------------------------------------------------------------------- events


def event(kind: str, severity: str, text: str, t_ns: int | None, **extra) -> dict:
    return {"kind": kind, "severity": severity, "text": text, "t_ns": t_ns, **extra}


def changes(before: dict | None, after: dict) -> list[dict]:
    """Events between two snapshots: links down / up, switches lost / back, ports that
    became blocked or paused / were released. The first snapshot reports what is
    already wrong."""
    t = after.get("t_ns")
    events = []
    old_links = (before or {}).get("links", {})
    for lid, link in after["links"].items():
        was = old_links.get(lid, {}).get("state", "up")
        if link["state"] == "down" and was != "down":
            events.append(event("link", "error", f"link {lid} down: "
                                 + "; ".join(link["down_by"]), t, link=lid))
        elif link["state"] == "up" and was == "down":
            events.append(event("link", "info", f"link {lid} up again", t, link=lid))
    old_switches = (before or {}).get("switches", {})
    for name, sw in after["switches"].items():
        was = old_switches.get(name, {}).get("reachable", True)
        if not sw["reachable"] and was:
            events.append(event("switch", "error", f"{name} does not answer: {sw['error']}",
                                 t, switch=name))
        elif sw["reachable"] and not was:
            events.append(event("switch", "info", f"{name} answers again", t, switch=name))
    old_ports = (before or {}).get("ports", {})
    for key, port in after["ports"].items():
        now = bool(port["blocked"] or port["paused"])
        was_port = old_ports.get(key)
        was = bool(was_port and (was_port["blocked"] or was_port["paused"]))
        if now != was:
            what = "paused (pause frames received)" if port["paused"] else "blocked"
            text = f"port {key} {what}" if now else f"port {key} moving again"
            if now and port["blocked_share"] is not None:
                text += f", {port['blocked_share']:.0%} of the interval"
            events.append(event("flow_control", "warn" if now else "info", text, t, port=key))
        old_total = (was_port or {}).get("drops") or 0
        if port["drops"] and port["drops"] > old_total:
            reasons = ", ".join(f"{r} {n}" for r, n in sorted(port["drop_reasons"].items()))
            events.append(event("drops", "warn", f"port {key} dropped {port['drops'] - old_total}"
                                f" frames ({port['drops']} so far: {reasons})", t, port=key))
    return events


def sm_event(record: dict) -> dict:
    """One record of the SM's timeline (SubnetManager.handle_port_event) as an event."""
    where = f"{record.get('switch')}:{record.get('port')}"
    what = "down" if record.get("event") == "port_down" else "up"
    link = record.get("link")
    text = f"agent at {where} reports port {what}" + (f" (link {link})" if link else "")
    if record.get("switchover_ms") is not None:
        text += f"; fast reroute switchover {record['switchover_ms']:.1f} ms"
    if record.get("note"):
        text += f"; {record['note']}"
    elif record.get("global_reroute_ms") is not None:
        text += (f"; SM global reroute done {record['global_reroute_ms']:.0f} ms after "
                 f"detection, {record.get('entries_written', 0)} entries written")
    if record.get("sa_changed_paths"):
        text += (f"; hosts told of {record['sa_changed_paths']} changed paths "
                 f"({record.get('sa_reports_sent', 0)} SA REPORT frames)")
    problem = record.get("error") or record.get("switchover_error")
    if problem:
        text += f"; ERROR: {problem}"
    return event("sm", "error" if problem else "warn" if what == "down" else "info", text,
                  record.get("sm_received_ns") or record.get("detected_ns"),
                  **({"link": link} if link else {}), record=record)
