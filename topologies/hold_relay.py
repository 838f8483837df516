"""The hold relay: a bmv2 switch's held frames wait here, released in ticket order.

fabric.p4 lets only the head ticket of an egress queue leave (flow_control.p4); a
held frame on real bmv2 goes out of port HOLD_OUT_PORT with its ticket in a hold
header and comes back in on HOLD_IN_PORT (hold_loop.p4). A plain paced veth pair
between the two ports is one FIFO for all of a switch's held frames: a frame that
comes back while it is not yet the head goes round again behind fresher ones, and
once a blocked head has scrambled a busy queue every ticket makes several rounds
and the queue drains at a fraction of its link (docs/fabric.md, "The hold loop").

The relay sits between the two ports instead (topologies/hold_loop.py wires it:
port 508's veth peer is its input, port 509's veth peer its output) and does what
a switch's buffer would: it keeps each queue's frames sorted by ticket and gives
them back in that order, at most `pace_pps` a second per switch, round robin over
the queues. A queue gets a window of frames in flight through the switch: bmv2
keeps the order of one input port into one egress queue, so a run of consecutive
tickets reaches the gate in order and leaves at the link's pace. A frame that comes
back was refused (its queue is blocked: paused, no credit): its window drops to one,
so a blocked queue costs the switch one frame per round trip, its head, not all its
frames; a frame that does not come back within ~2 round trips left the switch, and
the window doubles (up to WINDOW_MAX). A wrong guess costs one extra pass of a frame
that is refused and comes back: it never changes what the switch sends.

Run by the switch's node (topologies/network.py) as
`python -m topologies.hold_relay --rx IFACE --tx IFACE --pace PPS --stats FILE`,
recorded in the run's ledger and stopped by PID; SIGTERM writes the final counts.
"""

from __future__ import annotations

import argparse
import heapq
import json
import os
import select
import signal
import socket
import sys
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

MAGIC = b"\x48\x4c"  # hold_loop.p4 HOLD_MAGIC
HEADER_BYTES = 20  # hold_t
_AFTER_MAGIC_BITS = 144
ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4

WINDOW_MAX = 32  # frames of one queue in flight through the switch
BURST = 8  # frames the pace lets go at once after a quiet spell
RTT_MIN_S = 0.001
RTT_MAX_S = 0.05  # a frame not back after 2 x this long has surely left
STATS_EVERY_S = 0.5


def _field(bits: int, offset: int, width: int) -> int:
    return (bits >> (_AFTER_MAGIC_BITS - offset - width)) & ((1 << width) - 1)


def parse(frame: bytes) -> tuple[tuple[int, int], int | None] | None:
    """((out_port, class), ticket or None) from a frame's hold header, None if it has none.
    hold_t after the magic: is_data 1, held 1, has_ticket 1, ticket 32, arrival_ts 48,
    verdict 32, in_port 9, in_cls 3, out_port 9, cls 3, pad 5."""
    if len(frame) < HEADER_BYTES or frame[:2] != MAGIC:
        return None
    bits = int.from_bytes(frame[2:HEADER_BYTES], "big")
    queue = (_field(bits, 127, 9), _field(bits, 136, 3))
    return queue, (_field(bits, 3, 32) if _field(bits, 2, 1) else None)


@dataclass
class _Queue:
    waiting: list = field(default_factory=list)  # heap of (ticket order, seq, frame)
    in_flight: dict = field(default_factory=dict)  # order -> released at (s)
    window: int = 1


@dataclass
class Counts:
    frames_in: int = 0
    frames_out: int = 0
    refused: int = 0  # frames back while still in flight: the switch held them again
    not_held: int = 0  # frames without a hold header: dropped
    waiting_peak: int = 0


class OrderedHold:
    """The relay's state, without sockets: `arrive` a frame, `release` the next one."""

    def __init__(self, pace_pps: float, window_max: int = WINDOW_MAX, burst: int = BURST):
        if pace_pps <= 0:
            raise ValueError(f"pace {pace_pps} frames/s is not positive")
        self.pace_pps = pace_pps
        self.window_max = window_max
        self.burst = burst
        self.tokens = float(burst)
        self.last_fill: float | None = None
        self.queues: dict[tuple, _Queue] = {}
        self.order: deque = deque()  # queues with frames waiting, round robin
        self.rtt_s = 0.005
        self.seq = 0
        self.counts = Counts()
        self.waiting = 0

    def arrive(self, frame: bytes, now: float) -> None:
        parsed = parse(frame)
        if parsed is None:
            self.counts.not_held += 1
            return
        key, ticket = parsed
        self.counts.frames_in += 1
        self.seq += 1
        if ticket is None:  # no ticket: it takes one at the gate, in arrival order
            key, order = (*key, "untracked"), self.seq
        else:
            order = ticket
        q = self.queues.setdefault(key, _Queue())
        released = q.in_flight.pop(order, None)
        if released is not None:
            self.counts.refused += 1
            self.rtt_s = min(RTT_MAX_S, max(RTT_MIN_S, 0.8 * self.rtt_s + 0.2 * (now - released)))
            q.window = 1
        if not q.waiting:
            self.order.append(key)
        heapq.heappush(q.waiting, (order, self.seq, frame))
        self.waiting += 1
        self.counts.waiting_peak = max(self.counts.waiting_peak, self.waiting)

    def _expire(self, q: _Queue, now: float) -> None:
        """Frames not back after two round trips left the switch: the window grows."""
        gone = [o for o, t in q.in_flight.items() if now - t > 2 * self.rtt_s]
        for o in gone:
            del q.in_flight[o]
        if gone:
            q.window = min(self.window_max, q.window * 2)

    def _fill(self, now: float) -> None:
        if self.last_fill is not None:
            self.tokens = min(float(self.burst),
                              self.tokens + (now - self.last_fill) * self.pace_pps)
        self.last_fill = now

    def release(self, now: float) -> bytes | None:
        """The next frame to give back to the switch, None if none may go now."""
        self._fill(now)
        if self.tokens < 1.0:
            return None
        for _ in range(len(self.order)):
            key = self.order[0]
            self.order.rotate(-1)
            q = self.queues[key]
            self._expire(q, now)
            if len(q.in_flight) >= q.window and key[-1] != "untracked":
                continue
            order, _seq, frame = heapq.heappop(q.waiting)
            if not q.waiting:
                self.order.remove(key)
            if key[-1] != "untracked":
                q.in_flight[order] = now
            self.waiting -= 1
            self.tokens -= 1.0
            self.counts.frames_out += 1
            return frame
        return None

    def wait_s(self, now: float) -> float | None:
        """How long until `release` might give a frame (None: not until one arrives)."""
        if not self.order:
            return None
        if self.tokens < 1.0:
            return (1.0 - self.tokens) / self.pace_pps
        return min(2 * self.rtt_s, 0.01)


def _open(rx_iface: str, tx_iface: str) -> tuple[socket.socket, socket.socket]:
    rx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    rx.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    rx.bind((rx_iface, ETH_P_ALL))
    rx.setblocking(False)
    tx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    tx.bind((tx_iface, 0))
    return rx, tx


def _write_stats(path: Path | None, hold: OrderedHold) -> None:
    if path is None:
        return
    data = {**hold.counts.__dict__, "waiting": hold.waiting, "rtt_ms": round(hold.rtt_s * 1e3, 3),
            "pace_pps": hold.pace_pps}
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data) + "\n")
    os.replace(tmp, path)


def relay(rx_iface: str, tx_iface: str, pace_pps: float, stats: Path | None) -> None:
    """Run until SIGTERM: frames from rx_iface back out of tx_iface in ticket order."""
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(True))
    rx, tx = _open(rx_iface, tx_iface)
    hold = OrderedHold(pace_pps)
    next_stats = 0.0
    while not stop:
        now = time.monotonic()
        wait = hold.wait_s(now)
        try:
            ready, _, _ = select.select([rx], [], [], STATS_EVERY_S if wait is None else wait)
        except InterruptedError:
            continue
        now = time.monotonic()
        if ready:
            while True:
                try:
                    data, addr = rx.recvfrom(65536)
                except BlockingIOError:
                    break
                if addr[2] != PACKET_OUTGOING:
                    hold.arrive(data, now)
        while (frame := hold.release(now)) is not None:
            try:
                tx.send(frame)
            except OSError as exc:  # the switch's interface went away: the run is ending
                print(f"hold relay: send on {tx_iface}: {exc}", file=sys.stderr)
                stop.append(True)
                break
        if now >= next_stats:
            _write_stats(stats, hold)
            next_stats = now + STATS_EVERY_S
    _write_stats(stats, hold)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m topologies.hold_relay",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--rx", required=True, help="the veth peer of the hold out port")
    parser.add_argument("--tx", required=True, help="the veth peer of the hold in port")
    parser.add_argument("--pace", type=float, required=True, help="frames/s back, at most")
    parser.add_argument("--stats", type=Path, help="counts written here, JSON")
    args = parser.parse_args(argv)
    try:
        relay(args.rx, args.tx, args.pace, args.stats)
    except OSError as exc:
        print(f"hold relay: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
