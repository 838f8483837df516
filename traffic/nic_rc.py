"""The NIC's RC transport (InfiniBand reliable connection): PSNs, ACK/NAK, go-back-N, timeouts.

See traffic/nic.py's module doc for the protocol; this mixin holds its state and handlers.

Recovery after a path change: the receiver NAKs the first frame past a gap, and
the NAK starts the go-back at once (also when a go-back is already under way and
has passed the NAKed PSN: it starts over from there). When every frame of the
window was lost, nothing arrives to be NAKed; as on an RNIC the timeout is then
the only way back, so it follows the measured round trip (traffic/rc_rto.py, per
flow as IB's local ACK timeout is per QP) instead of a fixed 100 ms.

Timeouts and link-level flow control: a timeout that fires while the flow's own
class is paused (PFC) or out of credit, or that counted time the class was held,
is not the peer's silence but the link's: by default (`rc_paused_timeouts`
"defer") it is deferred, with no go-back and no retry counted. "retransmit" goes
back anyway, as RNICs do; either way the retransmissions a timeout started while
the class had been held since the last progress are counted
(`retransmitted_while_paused`, total and per flow): the finding behind a
retransmission storm in a PFC storm.

What a timeout resends (`rc_timeout_resend`): "window" is InfiniBand's go-back-N
from the oldest unacknowledged PSN; "probe" (default) resends only the oldest
frame, like TCP after a timeout, and goes back over the rest once the receiver
answers that it took the probe and wants the PSN after it (the frames behind it
were lost); an ACK further on means they arrived late, and nothing is resent. Frames held behind a pause
further down the path, which the sender cannot see, are then not sent again
and again: each timeout costs one frame, not a window. The receiver ACKs an
isolated frame at once (no other frame of the flow arrived for
`rc_ack_delay_ms`), so a probe's answer is not held by ACK coalescing.

What a NAK resends (`rc_retransmission`): "go-back-n" is InfiniBand RC: the
receiver discards every frame past a gap and the sender resends the window from
the NAKed PSN, frames that had arrived included. "selective" is selective repeat
(as RoCE NICs with out-of-order placement do, and IRN): the receiver keeps a
frame past a gap (within rc_window of the next PSN it expects; the data is
placed, the step's frame counted) and its NAK names the hole, from the PSN it
expects to the first one it holds past it (carried in the NAK's `step` field);
the sender resends only the hole. When the hole is filled the receiver's next
expected PSN jumps over what it holds; another hole below held frames is NAKed
at once."""

from __future__ import annotations

import errno
import time
from collections import deque
from dataclasses import dataclass

from traffic.flow_control import FlowControl
from traffic.frames import (
    DATA_CODEC,
    ETHERTYPE_FABRIC,
    OPCODE_RC_ACK,
    SYNDROME_ACK,
    SYNDROME_NAK_SEQ,
    Kind,
)
from traffic.nic_config import (
    CREDIT_MOD,
    NUM_CLASSES,
    RC_BACKOFF_MAX_SHIFT,
    NicConfig,
)
from traffic.nic_jobs import (
    ACK_FIELDS,
    CHUNK_I,
    PSN_I,
    TS_I,
    Retransmission,
    TxJob,
)
from traffic.nic_socket import link_down_error
from traffic.rc_rto import RtoEstimator
from traffic.rc_window import DelayWindow
from traffic.sender import APP_LEN, BTH_LEN


@dataclass
class RcStats:
    """The RC transport's counters (all zero with transport "ud")."""

    acks_sent: int = 0
    naks_sent: int = 0
    acks_received: int = 0
    naks_received: int = 0
    retransmitted: int = 0  # frames sent again
    go_backs: int = 0  # retransmissions started (by a NAK or a timeout)
    nak_go_backs: int = 0  # ... of them by a NAK (a restart of a running one included)
    timeouts: int = 0  # timeouts that went back (and counted towards the retry limit)
    timeouts_deferred: int = 0  # fired while the flow's class was held: waited instead
    retransmitted_while_paused: int = 0  # frames of go-backs a timeout started while held
    timeout_probes: int = 0  # timeouts that resent only the oldest frame (rc_timeout_resend)
    rtt_samples: int = 0
    out_of_sequence: int = 0  # received past a gap: discarded, NAKed once
    out_of_order_kept: int = 0  # selective: received past a gap and kept
    selective_resends: int = 0  # selective: go-backs of only the hole a NAK named
    duplicates: int = 0  # received again: discarded, acknowledged
    flows_failed: int = 0  # gave up after rc_retry_limit timeouts


FLOW_COUNTERS = ("retransmitted", "retransmitted_while_paused", "go_backs", "nak_go_backs",
                 "timeouts", "timeouts_deferred")


class RcTransport:
    """Mixin of Nic: the RC transport's state (_init_rc) and handlers."""

    def _init_rc(self, config: NicConfig) -> None:
        self.rc = config.transport == "rc"
        self.rc_stats = RcStats()
        self.rc_errors: list[str] = []
        self._inflight: dict[int, deque] = {}  # flow -> (psn, job, i) sent, unacknowledged
        self._progress_ns: dict[int, int] = {}  # flow -> last acknowledgement progress
        self._rto_entry: dict[int, list] = {}  # flow -> its retransmission timer
        self._retries: dict[int, int] = {}  # flow -> timeouts in a row without progress
        self._retx: dict[int, Retransmission] = {}
        self._failed_flows: set[int] = set()
        self._window_waits = 0
        self._sl_of_lid = dict(config.sl_of_lid)
        self._sl_changed: set[int] = set()  # DLIDs whose SL an SA REPORT changed
        self._sa_seen: set[int] = set()
        self.sa_changes: list[dict] = []
        self.sa_bad_frames = 0
        self.rto_ns = int(config.rc_timeout_ms * 1e6)
        self._rtt: dict[int, RtoEstimator] = {}  # flow -> its round trip and timeout
        self._cwnd: dict[int, DelayWindow] = {}  # flow -> its window (rc_window.py)
        self._retx_high: dict[int, int] = {}  # flow -> highest PSN sent twice (Karn)
        self._held_ref: dict[int, int] = {}  # flow -> its class's held time at progress
        self._flow_rc: dict[int, dict[str, int]] = {}  # flow -> FLOW_COUNTERS
        self.rc_failures: list[dict] = []  # flows that exhausted rc_retry_limit, when
        self._rx_expected: dict[tuple[int, int], int] = {}  # (slid, flow) -> next PSN
        self._rx_nak_sent: set[tuple[int, int]] = set()  # until the expected PSN arrives
        self._selective = config.rc_retransmission == "selective"
        self._rx_kept: dict[tuple[int, int], set[int]] = {}  # selective: PSNs past a gap
        self._rx_unacked: dict[tuple[int, int], int] = {}  # accepted since the last ACK
        self._rx_unacked_since: dict[tuple[int, int], int] = {}  # ... the first of them
        self._rx_last_ns: dict[tuple[int, int], int] = {}  # last frame accepted, per flow
        self._probing: dict[int, int] = {}  # flow -> PSN a timeout resent alone (a probe)
        self._ack_to: dict[tuple[int, int], tuple[int, int, int]] = {}  # -> (mac, sl, vl)
        self._ackq: list[deque] = [deque() for _ in range(NUM_CLASSES)]
        self._ack_queued: dict[tuple[int, int], int] = {}  # key -> syndrome, while queued
        self._ack_delay_entry: list | None = None
        self._ack_pkey: dict[tuple[int, int], int] = {}  # -> P_Key of our ACKs
        ack = {
            "dst_addr": 0, "src_addr": self.src_mac, "ether_type": ETHERTYPE_FABRIC, "vl": 0,
            "sl": 0, "kind": Kind.DATA, "dlid": 0, "slid": self.slid,
            "pkt_len": BTH_LEN + APP_LEN, "opcode": OPCODE_RC_ACK, "pkey": 0xFFFF, "dest_qp": 0, "psn": 0,
            "flow_id": 0, "coll_id": 0, "step": 0, "chunk": 0, "send_ts": 0,
        }
        self._ack_values = [int(ack[name]) for name in DATA_CODEC.fields]


    def _sent_reliably(self, flow: int, psn: int, job: TxJob, i: int, ts: int) -> None:
        inflight = self._inflight.get(flow)
        if inflight is None:
            inflight = self._inflight[flow] = deque()
        now = time.monotonic_ns()
        if not inflight:
            self._progress(flow, job.vl, now)
            if flow not in self._rto_entry:
                self._arm_rto(flow)
        inflight.append((psn, job, i, now))

    def _window_open(self, vl: int) -> bool:
        """Rotate the class queue to a job whose flow has fewer unacknowledged frames than
        its window (rc_window.py; rc_window until the flow's first sample); a
        retransmission always may go. False if there is none."""
        queue, window, inflight = self._queues[vl], self.cfg.rc_window, self._inflight
        windows = self._cwnd
        for _ in range(len(queue)):
            job = queue[0]
            if type(job) is not TxJob:
                return True
            flow = job.spec.flow
            cwnd = windows.get(flow)
            if len(inflight.get(flow, ())) < (window if cwnd is None else cwnd.frames):
                return True
            queue.rotate(-1)
        self._window_waits += 1
        return False

    def _arm_rto(self, flow: int, extra_ns: int = 0) -> None:
        due = self._progress_ns[flow] + self._rto(flow) + extra_ns
        self._rto_entry[flow] = self._at(due, lambda f=flow: self._rto_fired(f))

    def _progress(self, flow: int, vl: int, now: int) -> None:
        """The flow's timer starts over: acknowledgement progress, a go-back, the link."""
        self._progress_ns[flow] = now
        self._held_ref[flow] = self._held_total(vl, now)

    def _held_now(self, vl: int, now: int) -> bool:
        """The class may not send at our port: paused (PFC) or out of credit (CREDIT)."""
        if self.mode is FlowControl.PFC:
            return self.paused_until[vl] > now
        if self.mode is FlowControl.CREDIT:
            return self.fccl_known[vl] and not self._allowed_quiet(vl)
        return False

    def _held_total(self, vl: int, now: int) -> int:
        """Time the class spent blocked with frames to send, so far (ns)."""
        since = self._blocked_since[vl]
        return self.fc.blocked_ns[vl] + (now - since if since is not None else 0)

    def _rto_fired(self, flow: int) -> None:
        del self._rto_entry[flow]
        inflight = self._inflight.get(flow)
        if not inflight or flow in self._failed_flows:
            return
        now = time.monotonic_ns()
        rto = self._rto(flow)
        if len(inflight) < self.cfg.rc_ack_every:
            # Fewer frames out than the receiver ACKs at once: it may hold the ACK for up
            # to rc_ack_delay_ms (the same on every NIC of a run) before sending it.
            rto += int(self.cfg.rc_ack_delay_ms * 1e6)
        if now - self._progress_ns[flow] < rto:  # progress since it was armed
            self._arm_rto(flow, rto - self._rto(flow))
            return
        vl = inflight[0][1].vl
        held_now = self._held_now(vl, now)
        held = self._held_total(vl, now) - self._held_ref.get(flow, 0)
        waited = now - self._progress_ns[flow] - held  # time the link let the frames go
        if (held_now or waited < rto) and self.cfg.rc_paused_timeouts == "defer":
            # The link held the frames, not the peer: wait for it, count no retry.
            self.rc_stats.timeouts_deferred += 1
            self._count(flow, "timeouts_deferred")
            if held_now:
                self._progress(flow, vl, now)  # a full timeout once the link lets us go
            else:
                self._held_ref[flow] += held
                self._progress_ns[flow] = now - max(0, waited)
            self._arm_rto(flow)
            return
        paused = held_now or held > 0
        self.rc_stats.timeouts += 1
        self._count(flow, "timeouts")
        retries = self._retries.get(flow, 0) + 1
        self._retries[flow] = retries
        if retries > self.cfg.rc_retry_limit:
            psn, job = inflight[0][0], inflight[0][1]
            self.rc_failures.append({"flow": flow, "dlid": job.spec.dlid, "psn": psn,
                                     "coll_id": job.spec.coll_id, "timeouts": retries - 1,
                                     "t_ns": time.time_ns()})
            self._fail_flow(flow, f"flow {flow}: {retries - 1} retransmission timeouts in a "
                                  f"row, PSN {psn} never acknowledged")
            return
        self._go_back(flow, paused=paused, probe=self.cfg.rc_timeout_resend == "probe")
        self._progress(flow, vl, now)
        self._arm_rto(flow)

    def _rto(self, flow: int) -> int:
        """The flow's retransmission timeout (rc_rto.py), doubled for every timeout in a
        row up to 8 x (a receiver that stalls for a second or two is waited for, rather
        than given up on after 7 short timeouts; the cap keeps a resumed receiver's wait
        short)."""
        return self._estimator(flow).rto_ns(self._retries.get(flow, 0))

    def _estimator(self, flow: int) -> RtoEstimator:
        est = self._rtt.get(flow)
        if est is None:
            cfg = self.cfg
            est = self._rtt[flow] = RtoEstimator(
                self.rto_ns, int(cfg.rc_rto_min_ms * 1e6), int(cfg.rc_rto_max_ms * 1e6),
                RC_BACKOFF_MAX_SHIFT, adaptive=cfg.rc_rto == "adaptive")
        return est

    def _window(self, flow: int) -> DelayWindow:
        win = self._cwnd.get(flow)
        if win is None:
            cfg = self.cfg
            win = self._cwnd[flow] = DelayWindow(
                cfg.rc_window, min(cfg.rc_window, 2 * cfg.rc_ack_every),
                int(cfg.rc_ack_delay_ms * 1e6), adaptive=cfg.rc_window_control == "delay")
        return win

    def _count(self, flow: int, counter: str, n: int = 1) -> None:
        counts = self._flow_rc.get(flow)
        if counts is None:
            counts = self._flow_rc[flow] = dict.fromkeys(FLOW_COUNTERS, 0)
        counts[counter] += n

    def _go_back(self, flow: int, paused: bool = False, probe: bool = False,
                 below: int | None = None) -> None:
        """Send every unacknowledged frame of the flow again, in PSN order, before new ones
        (`probe`: only the oldest; its acknowledgement decides about the rest; `below`:
        only those with a lower PSN, the hole a selective NAK named).
        `paused`: a timeout started it while the flow's class was held (counted)."""
        inflight = self._inflight.get(flow)
        if not inflight:
            return
        self.rc_stats.go_backs += 1
        self._count(flow, "go_backs")
        if probe:
            entries = [inflight[0]]
        elif below is not None:
            entries = [e for e in inflight if e[0] < below] or [inflight[0]]
        else:
            entries = list(inflight)
        if probe:
            self._probing[flow] = inflight[0][0]
            self.rc_stats.timeout_probes += 1
        else:
            self._probing.pop(flow, None)
        self._retx_high[flow] = max(self._retx_high.get(flow, -1), entries[-1][0])
        retx = self._retx.get(flow)
        if retx is not None:  # already going back: start over from the oldest
            retx.entries, retx.pos, retx.paused = entries, 0, paused
            return
        vl = entries[0][1].vl
        retx = self._retx[flow] = Retransmission(flow, vl, entries, paused)
        queue = self._queues[vl]
        keep = deque()
        for job in queue:
            if type(job) is TxJob and job.spec.flow == flow:
                retx.parked.append(job)
            else:
                keep.append(job)
        keep.appendleft(retx)
        self._queues[vl] = keep
        self._active_classes |= 1 << vl
        self._kick_tx()

    def _retransmit(self, retx: Retransmission) -> bool:
        entries, flow = retx.entries, retx.flow
        inflight = self._inflight.get(flow)
        oldest = inflight[0][0] if inflight else None
        while retx.pos < len(entries) and (oldest is None or entries[retx.pos][0] < oldest):
            retx.pos += 1  # acknowledged meanwhile
        if retx.pos < len(entries):
            psn, job, i, _first_ns = entries[retx.pos]
            values = job.values
            values[PSN_I] = psn
            values[CHUNK_I] = job.chunk_of(i)
            ts = time.time_ns()
            values[TS_I] = ts
            try:
                self._send(DATA_CODEC.pack_values(*values) + job.payload)
            except OSError as exc:
                if exc.errno in (errno.ENOBUFS, errno.EAGAIN):
                    return False
                if not link_down_error(exc):
                    raise
                self.tx_link_down += 1
            self.sent_flow.append(flow)
            self.sent_psn.append(psn)
            self.sent_ns.append(ts)
            self.last_tx_ns = ts
            self.fctbs[retx.vl] = (self.fctbs[retx.vl] + 1) % CREDIT_MOD
            self.rc_stats.retransmitted += 1
            self._count(flow, "retransmitted")
            if retx.paused:
                self.rc_stats.retransmitted_while_paused += 1
                self._count(flow, "retransmitted_while_paused")
            retx.pos += 1
        queue = self._queues[retx.vl]
        if retx.pos >= len(entries):
            queue.popleft()
            del self._retx[flow]
            queue.extend(retx.parked)
            self._class_idle(retx.vl)
        elif len(queue) > 1:
            queue.rotate(-1)
        return True

    def _fail_flow(self, flow: int, why: str) -> None:
        self.rc_stats.flows_failed += 1
        self.rc_errors.append(why)
        self._failed_flows.add(flow)
        self._inflight.pop(flow, None)
        self._probing.pop(flow, None)
        retx = self._retx.pop(flow, None)
        for vl in range(NUM_CLASSES):
            queue = self._queues[vl]
            if any((j is retx) or (type(j) is TxJob and j.spec.flow == flow) for j in queue):
                self._queues[vl] = deque(j for j in queue if j is not retx and not (
                    type(j) is TxJob and j.spec.flow == flow))
                self._class_idle(vl)

    def _on_ack(self, f) -> None:
        """An ACK/NAK for one of our flows: psn = the next PSN the receiver expects."""
        flow, psn = f.flow_id, f.psn
        nak = f.chunk == SYNDROME_NAK_SEQ
        if nak:
            self.rc_stats.naks_received += 1
        else:
            self.rc_stats.acks_received += 1
        inflight = self._inflight.get(flow)
        if not inflight:
            return
        newest = clean = None
        acked = 0
        sent_twice = self._retx_high.get(flow, -1)
        while inflight and inflight[0][0] < psn:
            newest = inflight.popleft()
            acked += 1
            if clean is None and newest[0] > sent_twice:
                clean = newest
            job = newest[1]
            job.acked += 1
            if job.acked >= job.spec.count:
                job.acked_ns = time.time_ns()
                if job.done_ns is not None:
                    self._jobs_left -= 1
                    self._check_done()
        if newest is not None:
            now = time.monotonic_ns()
            if clean is not None:
                # The oldest frame it covers that was sent once (Karn): its wait includes
                # the receiver's coalescing of rc_ack_every frames, as a timeout must.
                est = self._estimator(flow)
                est.sample(now - clean[3])
                self._window(flow).sample(now - clean[3], acked, now, est.srtt_ns)
                self.rc_stats.rtt_samples += 1
            self._progress(flow, newest[1].vl, now)
            self._retries[flow] = 0
            self._kick_tx()  # the flow's window may have opened
            probe = self._probing.get(flow)
            if probe is not None and psn > probe:
                # Answered: the receiver took the probe and wants the PSN after it, so the
                # frames sent after it before the timeout were lost: send them. An ACK
                # further on came from those frames arriving late (queued behind a
                # pause): nothing to resend.
                del self._probing[flow]
                if psn == probe + 1 and inflight and not nak:
                    self._go_back(flow)
        if nak and inflight:
            retx = self._retx.get(flow)
            # A go-back under way that already resent the NAKed PSN (into a path that
            # was still broken) starts over from it; one that has not reached it goes on.
            # Selective: a NAK past everything it resends names a later hole (the earlier
            # one is filled), which it would never reach.
            if retx is None or (retx.pos > 0 and retx.entries[retx.pos - 1][0] >= psn) or (
                    self._selective and retx.entries[-1][0] < psn):
                self.rc_stats.nak_go_backs += 1
                self._count(flow, "nak_go_backs")
                hole = f.step if self._selective else 0  # 0: not named, the whole window
                if hole:
                    self.rc_stats.selective_resends += 1
                self._go_back(flow, below=psn + hole if hole else None)

    def _rc_receive(self, f, key: tuple[int, int], vl: int) -> bool:
        """Transport check of an admitted RC frame: True if it is the next in sequence."""
        expected = self._rx_expected.get(key, 0)
        if key not in self._ack_to:  # ACKs travel on the SL of paths to the sender
            sl = self._sl_of_lid.get(f.slid, f.sl)
            self._ack_to[key] = (f.src_addr, sl, self._vl_of_sl(sl))
            # Partitions: the frame passed, so if its sender is a limited member we are a
            # full one, and vice versa sending as limited always passes: flip bit 15.
            self._ack_pkey[key] = f.pkey ^ 0x8000
        if f.psn == expected:
            expected += 1
            kept = self._rx_kept.get(key)
            while kept and expected in kept:  # selective: the hole is filled, jump over
                kept.discard(expected)
                expected += 1
            self._rx_expected[key] = expected
            self._rx_nak_sent.discard(key)
            unacked = self._rx_unacked.get(key, 0) + 1
            self._rx_unacked[key] = unacked
            now = time.monotonic_ns()
            last = self._rx_last_ns.get(key)
            self._rx_last_ns[key] = now
            # An isolated frame (a timeout's probe, a step's first frame) is ACKed at once:
            # no other frame of the flow is coming soon to share the ACK with.
            if unacked >= self.cfg.rc_ack_every or (
                    last is not None and now - last >= self.cfg.rc_ack_delay_ms * 1e6):
                self._queue_ack(key, SYNDROME_ACK)
            elif unacked == 1:
                self._rx_unacked_since[key] = now
                if self._ack_delay_entry is None:
                    self._ack_delay_entry = self._at(now + self.cfg.rc_ack_delay_ms * 1e6,
                                                     self._ack_delayed)
            if expected > f.psn + 1:  # a hole filled, held frames passed over
                if kept:  # and another hole below frames we hold: lost as the first was
                    self._rx_nak_sent.add(key)
                    self._queue_ack(key, SYNDROME_NAK_SEQ)
                else:  # free the sender's window at once
                    self._queue_ack(key, SYNDROME_ACK)
            elif kept:  # filling a hole: the rest of it is on its way, NAKed already
                self._rx_nak_sent.add(key)
            return True
        if self._selective and expected < f.psn < expected + self.cfg.rc_window:
            return self._keep_out_of_order(f.psn, key)
        if f.psn > expected:
            self.rc_stats.out_of_sequence += 1
            if key not in self._rx_nak_sent:
                self._rx_nak_sent.add(key)
                self._queue_ack(key, SYNDROME_NAK_SEQ)
        else:
            self.rc_stats.duplicates += 1
            self._queue_ack(key, SYNDROME_ACK)
        return False

    def _keep_out_of_order(self, psn: int, key: tuple[int, int]) -> bool:
        """Selective repeat: keep a frame past a gap (True), NAK the hole once."""
        kept = self._rx_kept.get(key)
        if kept is None:
            kept = self._rx_kept[key] = set()
        if psn in kept:
            self.rc_stats.duplicates += 1
            self._queue_ack(key, SYNDROME_ACK)
            return False
        kept.add(psn)
        self.rc_stats.out_of_order_kept += 1
        if key not in self._rx_nak_sent:
            self._rx_nak_sent.add(key)
            self._queue_ack(key, SYNDROME_NAK_SEQ)
        return True

    def _hole(self, key: tuple[int, int]) -> int:
        """The PSNs missing from the next expected one to the first kept past it (0: none)."""
        kept = self._rx_kept.get(key)
        if not kept:
            return 0
        return min(min(kept) - self._rx_expected.get(key, 0), 0xFFFF)

    def _ack_delayed(self) -> None:
        """ACK every flow whose oldest unacknowledged frame waited rc_ack_delay_ms (each
        flow its own delay: a slow flow is not ACKed frame by frame because of a fast one)."""
        self._ack_delay_entry = None
        now = time.monotonic_ns()
        delay = self.cfg.rc_ack_delay_ms * 1e6
        next_due = None
        for key, unacked in list(self._rx_unacked.items()):
            if not unacked:
                continue
            due = self._rx_unacked_since.get(key, now) + delay
            if due <= now:
                self._queue_ack(key, SYNDROME_ACK)
            elif next_due is None or due < next_due:
                next_due = due
        if next_due is not None:
            self._ack_delay_entry = self._at(next_due, self._ack_delayed)

    def _queue_ack(self, key: tuple[int, int], syndrome: int) -> None:
        self._rx_unacked[key] = 0
        queued = self._ack_queued.get(key)
        if queued is not None:  # one ACK in the queue says it all (a NAK stays a NAK)
            self._ack_queued[key] = queued or syndrome
            return
        self._ack_queued[key] = syndrome
        vl = self._ack_to[key][2]
        self._ackq[vl].append(key)
        self._active_classes |= 1 << vl
        self._kick_tx()

    def _transmit_ack(self, vl: int) -> bool:
        key = self._ackq[vl][0]
        syndrome = self._ack_queued[key]
        hole = self._hole(key) if self._selective else 0
        if syndrome == SYNDROME_NAK_SEQ and self._selective and not hole:
            syndrome = SYNDROME_ACK  # the hole was filled while the NAK waited
        mac, sl, _vl = self._ack_to[key]
        values, at = self._ack_values, ACK_FIELDS
        values[at["dst_addr"]], values[at["vl"]], values[at["sl"]] = mac, vl, sl
        values[at["dlid"]], values[at["flow_id"]] = key
        values[at["psn"]] = self._rx_expected.get(key, 0)
        values[at["chunk"]] = syndrome
        values[at["step"]] = hole if syndrome == SYNDROME_NAK_SEQ else 0
        values[at["pkey"]] = self._ack_pkey.get(key, 0xFFFF)
        values[at["send_ts"]] = time.time_ns()
        try:
            self._send(DATA_CODEC.pack_values(*values))
        except OSError as exc:
            if exc.errno in (errno.ENOBUFS, errno.EAGAIN):
                return False
            if not link_down_error(exc):
                raise
            self.tx_link_down += 1
        self._ackq[vl].popleft()
        del self._ack_queued[key]
        self.fctbs[vl] = (self.fctbs[vl] + 1) % CREDIT_MOD
        if syndrome == SYNDROME_NAK_SEQ:
            self.rc_stats.naks_sent += 1
        else:
            self.rc_stats.acks_sent += 1
        self._class_idle(vl)
        return True

