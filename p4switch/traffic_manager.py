"""The traffic manager between ingress and egress, like bmv2's.

Per egress port: `priority_queues` FIFOs (strict priority, the highest index
is served first, as standard_metadata.priority 7 outranks 0, as in bmv2), each
holding at most `depth` packets. A port given a VL arbitration table
(`set_vl_arbitration`) serves its queues by InfiniBand's weighted high/low
arbitration instead (traffic/vl_arbitration.py), queue index = VL; bmv2 has
no such scheduler, its priority queues are always strict; a packet arriving at a full queue is tail-dropped and
counted (`drops[port].tail`, `Switch.tm_drops(port)`). A port serves its queues
at a rate (packets/s and/or bits/s; unset = as fast as the switch runs) and
hands each departing frame to the wire after a propagation delay. Egress
processing runs when a packet leaves its queue, so enq_qdepth, deq_qdepth,
deq_timedelta and egress_global_timestamp are what bmv2 would report.

Timing is event driven: departures, delayed frames and recirculated packets are
entries in one heap of deadlines; the switch's data-plane thread sleeps in
epoll until the earliest one (no polling, no spinning).

Recirculated packets have their own buffer (not the port queues), served
like a port of `recirc_rate_pps` (default 20000 packets/s, as a switch's
recirculation port has finite speed), and each waits at least
`recirc_interval_us` (default 50 us) before its next ingress pass. When a
recirculated packet comes back with nothing else having happened in the switch
since the previous pass (no frame received or transmitted), its wait doubles,
up to `recirc_idle_max_us` (default 1000 us), and the recirculation rate drops
to a tenth; the next real event restores both. Packets a P4 program holds by
recirculation (waiting for credit or for a pause to end) therefore cost at
most ~2000 passes per second in total while nothing changes, and are
re-examined within a base interval (or a round of the held packets at the full
recirculation rate) once something does.
"""

from __future__ import annotations

import heapq
import itertools
from collections import deque
from collections.abc import Callable

from traffic.vl_arbitration import VlArbiter, VlArbitration

DEFAULT_DEPTH = 64  # packets, bmv2's default

_DEPART, _WIRE, _RECIRC = 0, 1, 2


class PortDrops:
    """Packets dropped at one egress port, by reason."""

    __slots__ = ("tail", "port_down", "tx_error", "bad_priority")

    def __init__(self):
        self.tail = 0
        self.port_down = 0
        self.tx_error = 0
        self.bad_priority = 0

    def as_dict(self) -> dict[str, int]:
        return {k: getattr(self, k) for k in self.__slots__}


class PortQueue:
    __slots__ = ("port", "queues", "depth", "rate_pps", "rate_bps", "delay_s", "next_free",
                 "scheduled", "_up", "drops", "unlimited", "fast", "send", "arbiter")

    def __init__(self, port: int, nprio: int, depth: int):
        self.port = port
        self.queues = [deque() for _ in range(nprio)]
        self.depth = depth
        self.rate_pps: float | None = None
        self.rate_bps: float | None = None
        self.delay_s = 0.0
        self.next_free = 0.0
        self.scheduled = False
        self._up = True
        self.drops = PortDrops()
        self.unlimited = True
        self.fast = True  # up, unlimited rate, no delay: the switch may bypass the queue
        self.send = None  # the port socket's send, set by the switch
        self.arbiter: VlArbiter | None = None  # None: strict priority

    def next_queue(self) -> deque | None:
        """The queue to serve next: the VL arbiter's choice, else the highest
        non-empty priority; None when all are empty."""
        if self.arbiter is not None:
            ready = 0
            for i, q in enumerate(self.queues):
                if q:
                    ready |= 1 << i
            if not ready:
                return None
            vl = self.arbiter.pick(ready)
            # A queue no table entry serves still drains, after the others (strict).
            return self.queues[vl] if vl >= 0 else self.queues[ready.bit_length() - 1]
        for q in reversed(self.queues):
            if q:
                return q
        return None

    @property
    def up(self) -> bool:
        return self._up

    @up.setter
    def up(self, value: bool) -> None:
        self._up = value
        self.update()

    def update(self) -> None:
        self.unlimited = not self.rate_pps and not self.rate_bps
        self.fast = self._up and self.unlimited and not self.delay_s

    def service_time(self, nbytes: int) -> float:
        t = 0.0
        if self.rate_pps:
            t = 1.0 / self.rate_pps
        if self.rate_bps:
            t = max(t, nbytes * 8.0 / self.rate_bps)
        return t

    def occupancy(self) -> int:
        return sum(len(q) for q in self.queues)


class TrafficManager:
    """Egress queues, port schedulers and the timer heap of one switch."""

    def __init__(self, priority_queues: int = 1, recirc_interval_us: float = 50.0,
                 recirc_idle_max_us: float = 1000.0, t0: float = 0.0,
                 recirc_rate_pps: float = 20000.0):
        self.nprio = max(1, priority_queues)
        self.ports: dict[int, PortQueue] = {}
        self.timers: list = []
        self._seq = itertools.count()
        self.t0 = t0
        self.recirc_base = recirc_interval_us * 1e-6
        self.recirc_max = max(recirc_idle_max_us, recirc_interval_us) * 1e-6
        self._recirc_delay = self.recirc_base
        self.recirc_rate = recirc_rate_pps
        self._recirc: deque = deque()  # (eligible time, S)
        self._recirc_next_free = 0.0
        self._recirc_scheduled = False
        self._recirc_gen = 0
        self._quiet = False
        # Wired by the switch:
        self.egress: Callable[[int, list], bytes | None] = lambda port, S: None
        self.send: Callable[[int, bytes], bool] = lambda port, frame: True
        self.reinject: Callable[[list], None] = lambda S: None
        # Set by the switch: a non-zero cell means a control-plane write waits for the
        # switch lock; run_due calls yield_to_control between two timers then.
        self.control_pending: list[int] = [0]
        self.yield_to_control: Callable[[], None] = lambda: None
        self.set_layout({})

    def set_layout(self, std: dict[str, int]) -> None:
        """Slots of the standard metadata fields in the loaded program's S."""
        self.s_enq_ts = std.get("enq_timestamp", 0)
        self.s_enq_qd = std.get("enq_qdepth", 0)
        self.s_deq_td = std.get("deq_timedelta", 0)
        self.s_deq_qd = std.get("deq_qdepth", 0)
        self.s_eg_ts = std.get("egress_global_timestamp", 0)
        self.s_prio = std.get("priority", 0)

    def port(self, port: int) -> PortQueue:
        pq = self.ports.get(port)
        if pq is None:
            pq = self.ports[port] = PortQueue(port, self.nprio, DEFAULT_DEPTH)
        return pq

    def set_params(self, port: int, rate_pps: float | None = None,
                   rate_bps: float | None = None, delay_us: float | None = None,
                   depth: int | None = None) -> None:
        """Set what is given; a rate of 0 means unlimited."""
        pq = self.port(port)
        if rate_pps is not None:
            pq.rate_pps = rate_pps or None
        if rate_bps is not None:
            pq.rate_bps = rate_bps or None
        if delay_us is not None:
            pq.delay_s = delay_us * 1e-6
        if depth is not None:
            if depth < 1:
                raise ValueError(f"queue depth must be at least 1 packet, got {depth}")
            pq.depth = depth
        pq.update()

    def set_vl_arbitration(self, port: int, table: VlArbitration | None) -> None:
        """Serve the port's priority queues (index = VL) by this arbitration table;
        None: strict priority again."""
        if table is not None and max(table.vls()) >= self.nprio:
            raise ValueError(f"port {port}: the arbitration table names VL {max(table.vls())} "
                             f"but the switch has {self.nprio} priority queues per port "
                             f"(--priority-queues)")
        self.port(port).arbiter = VlArbiter(table) if table is not None else None

    def flush(self) -> None:
        """Forget every queued, delayed and recirculating packet (program swap)."""
        for pq in self.ports.values():
            for q in pq.queues:
                q.clear()
            pq.scheduled = False
        self.timers.clear()
        self._recirc.clear()
        self._recirc_scheduled = False

    def note_activity(self, now: float) -> None:
        """Something happened (a frame arrived): held packets are worth a look soon."""
        if self._quiet:
            self._quiet = False
            self._recirc_delay = self.recirc_base
            self._recirc_next_free = min(self._recirc_next_free, now)
            if self._recirc:
                soon = now + self.recirc_base
                eligible, S = self._recirc[0]
                if eligible > soon:
                    self._recirc[0] = (soon, S)
                self._schedule_recirc(soon)  # replaces the pending (later) timer

    # -- hot path ------------------------------------------------------------------------
    def enqueue(self, port: int, S: list, now: float) -> None:
        pq = self.ports.get(port)
        if pq is None:
            pq = self.port(port)
        # A port whose link is down still runs egress for what is queued to it: the
        # program may account for the frame (fabric.p4 frees its receive buffer and
        # counts it); it is dropped at the wire (drops.port_down), as bmv2 would.
        prio = S[self.s_prio]
        if prio >= self.nprio:  # bmv2: "Priority out of range, dropping packet"
            pq.drops.bad_priority += 1  # (one queue per port, its default, included)
            return
        q = pq.queues[prio]
        n = len(q)
        if n >= pq.depth:
            pq.drops.tail += 1
            return
        S[self.s_enq_ts] = int((now - self.t0) * 1e6)
        S[self.s_enq_qd] = n
        q.append(S)
        if not pq.scheduled:
            if pq.unlimited:
                self._drain(pq, now)
            else:
                pq.scheduled = True
                heapq.heappush(self.timers, (max(now, pq.next_free), next(self._seq),
                                             _DEPART, pq))

    def _drain(self, pq: PortQueue, now: float) -> None:
        """Serve an unlimited-rate port until its queues are empty."""
        pq.scheduled = True  # re-entrant enqueues (egress clones) just append
        try:
            while True:
                q = pq.next_queue()
                if q is None:
                    return
                self._charge(pq, q, self._depart_one(pq, q, now))
        finally:
            pq.scheduled = False

    def _depart_one(self, pq: PortQueue, q: deque, t: float) -> int:
        S = q.popleft()
        us = int((t - self.t0) * 1e6)
        S[self.s_deq_qd] = len(q)
        S[self.s_deq_td] = us - S[self.s_enq_ts]
        S[self.s_eg_ts] = us
        frame = self.egress(pq.port, S)
        if frame is None:
            return 0
        self._quiet = False
        if not pq.up:
            pq.drops.port_down += 1
        elif pq.delay_s:
            heapq.heappush(self.timers, (t + pq.delay_s, next(self._seq), _WIRE,
                                         (pq.port, frame)))
        elif not self.send(pq.port, frame):
            pq.drops.tx_error += 1
        return len(frame)

    @staticmethod
    def _charge(pq: PortQueue, q: deque, nbytes: int) -> None:
        """A frame of queue q went on the wire: the arbiter accounts for its bytes
        (a pass that egress held back or dropped sent nothing)."""
        if nbytes and pq.arbiter is not None:
            pq.arbiter.charge(pq.queues.index(q), nbytes)  # (a VL no entry serves: nothing)

    def recirculate(self, S: list, now: float) -> None:
        if self._quiet:
            self._recirc_delay = min(self._recirc_delay * 2, self.recirc_max)
        else:
            self._recirc_delay = self.recirc_base
        self._recirc.append((now + self._recirc_delay, S))
        if not self._recirc_scheduled:
            self._schedule_recirc()

    def _schedule_recirc(self, t: float | None = None) -> None:
        """One recirculation timer at a time: a new one makes the pending one
        stale (its generation no longer matches), so activity that brings the
        next pass forward never adds a second server of the buffer."""
        if t is None:
            t = max(self._recirc[0][0], self._recirc_next_free)
        self._recirc_gen += 1
        self._recirc_scheduled = True
        heapq.heappush(self.timers, (t, next(self._seq), _RECIRC, self._recirc_gen))

    def recirculating(self) -> int:
        """Packets waiting in the recirculation buffer."""
        return len(self._recirc)

    def next_deadline(self) -> float | None:
        return self.timers[0][0] if self.timers else None

    def run_due(self, now: float) -> None:
        """Run every timer whose deadline has passed."""
        timers = self.timers
        control_pending = self.control_pending
        while timers and timers[0][0] <= now:
            if control_pending[0]:
                self.yield_to_control()
            t, _seq, kind, arg = heapq.heappop(timers)
            if kind == _DEPART:
                pq = arg
                pq.scheduled = False
                q = pq.next_queue()
                if q is None:
                    continue
                # Keep the ideal timeline: a late timer catches up with a burst.
                start = max(t, pq.next_free)
                nbytes = self._depart_one(pq, q, start)
                self._charge(pq, q, nbytes)
                # Only a frame that goes on the wire takes the link's time: a pass that
                # egress held back (recirculated, waiting for credit or a resume) or
                # dropped sends nothing, and must not eat the slots of those that go.
                if nbytes:
                    pq.next_free = start + pq.service_time(nbytes)
                if any(pq.queues):
                    pq.scheduled = True
                    heapq.heappush(timers, (pq.next_free, next(self._seq), _DEPART, pq))
            elif kind == _WIRE:
                port, frame = arg
                pq = self.port(port)
                if not pq.up:
                    pq.drops.port_down += 1  # the link went down while the frame was on it
                elif not self.send(port, frame):
                    pq.drops.tx_error += 1
            else:
                if arg != self._recirc_gen:
                    continue  # superseded by a later _schedule_recirc
                self._recirc_scheduled = False
                if not self._recirc:
                    continue
                _eligible, S = self._recirc.popleft()
                rate = self.recirc_rate if not self._quiet else self.recirc_rate / 10
                self._recirc_next_free = t + (1.0 / rate if rate else 0.0)
                self._quiet = True
                self.reinject(S)
                if self._recirc and not self._recirc_scheduled:
                    self._schedule_recirc()
