"""Stall spread and what a fabric still held at the end, from the switches' telemetry.

Telemetry is what controller/readout.py reads: {switch: {port: {name: [one value per
class]}}}, or {switch: {"error": why}} for a switch that could not answer. The
class count is the length of the lists (the program's NUM_CLASSES).
"""

from __future__ import annotations

from collections.abc import Mapping

from traffic.metrics import HeldQueue, PortStall

STALL_SHARE = 0.01  # a port counts as stalled when blocked longer than this share of the window


def _ports(telemetry: Mapping[str, Mapping]):
    for switch, ports in sorted(telemetry.items()):
        if "error" in ports:
            continue
        for port, t in sorted(ports.items(), key=lambda kv: int(kv[0])):
            yield switch, int(port), t


def paused_ports(telemetry: Mapping[str, Mapping], window_ns: int,
                 share: float = STALL_SHARE) -> tuple[PortStall, ...]:
    """(switch, port, class) blocked by pauses or missing credit for more than `share` of
    the traffic window, or that sent pauses: DESIGN.md's stall spread."""
    out = []
    for switch, port, t in _ports(telemetry):
        blocked, pauses = t.get("blocked_ns", ()), t.get("pause_tx", ())
        for cls in range(max(len(blocked), len(pauses))):
            b = blocked[cls] if cls < len(blocked) else 0
            p = pauses[cls] if cls < len(pauses) else 0
            if (window_ns and b > share * window_ns) or p:
                out.append(PortStall(switch, port, cls, round(b / 1e6, 3), p))
    return tuple(out)


def held_at_end(telemetry: Mapping[str, Mapping]) -> tuple[HeldQueue, ...]:
    """(switch, port, class) with frames still in a receive buffer (`buffered`, by ingress
    port) or waiting at a transmit gate (`waiting`, by egress port) when the run ended."""
    out = []
    for switch, port, t in _ports(telemetry):
        buffered = t.get("fc_buffer", ())
        head, tail = t.get("fc_queue_head", ()), t.get("fc_queue_tail", ())
        for cls in range(len(buffered)):
            waiting = (tail[cls] - head[cls]) % (1 << 32) if cls < min(len(head), len(tail)) \
                else 0
            if buffered[cls] or waiting:
                out.append(HeldQueue(switch, port, cls, buffered[cls], waiting))
    return tuple(out)


def blocked_hosts(nics: Mapping[str, Mapping]) -> tuple[str, ...]:
    """Hosts that had not finished and still had frames their link would not take."""
    return tuple(sorted(name for name, s in nics.items() if not s.get("done")
                        and (s.get("flow_control") or {}).get("blocked_at_end")))
