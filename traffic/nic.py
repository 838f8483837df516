"""The NIC emulator: one host port speaking the fabric's link protocol (DESIGN.md).

One process per host, one thread: an epoll loop over a raw AF_PACKET socket,
the control socket and a timerfd that fires at the earliest deadline of a timer
heap (transmit slots, receive-buffer drain, pause expiry, credit refresh,
scheduled actions). Nothing spins: between deadlines the process sleeps.

Transmit side (exactly like a switch egress port, per class = VL = PFC priority):
  * one DATA frame per slot, slots at `rate_pps` on absolute deadlines;
    flows round-robin within a class; classes round-robin, or, when the port
    has a VL arbitration table (FLOWS.json "vl_arbitration", set from the SM's
    QoS policy), InfiniBand's weighted high/low arbitration
    (traffic/vl_arbitration.py) over the classes that may send;
  * PFC: a received 802.1Qbb pause holds its priority for quanta x 512 bit
    times, or until a pause with quanta 0 resumes it;
  * CREDIT: a frame may leave iff ((FCCL - (FCTBS + 1)) mod 4096) <= 2048;
    FCTBS counts DATA frames sent on the VL; FCCL is the last credit limit
    received. Until the first CREDIT frame, and every `credit_request_ms`
    while blocked and no CREDIT frame came in, a CREDIT frame with op REQUEST
    asks the peer for its FCCL (the switch's way of healing a lost one).

Receive side: DATA frames addressed to this port enter a buffer per class of
`buffer` frames, drained at `drain_pps` (0 = at once). Full buffer: dropped
and counted (LOSSY `buffer_full`, PFC `headroom_overflow`, CREDIT
`credit_violation`). PFC: crossing `xoff` sends a pause (quanta 0xFFFF,
re-sent every half pause time while above XON), draining to `xon` sends a
resume. CREDIT: ABR counts received frames (mod 4096, dropped ones too) and
every CREDIT frame sent advertises FCCL = ABR + free slots, with our FCTBS;
frames go out every `credit_coalesce` drained frames, when the buffer drains
empty, every `credit_refresh_ms` (so a lost one heals), at start-up (link init) and in
answer to a request. A received CREDIT frame sets FCCL; a request also resyncs
ABR to the peer's FCTBS (a request travels among the peer's data, so that FCTBS
counts every DATA frame sent before it; an update may have overtaken data still
queued after the peer's pipeline, topologies/link_rates.py): frames lost on the
wire leak credits only until the peer, short of them, asks. Flow-control frames
are never flow-controlled nor counted as data.

Transport (`transport`, FLOWS.json "transport" or --transport). "ud" (default):
DATA frames carry BTH opcode 0 and nobody acknowledges them; what the fabric
loses is lost. "rc", after InfiniBand RC: DATA frames carry opcode 0x04 (RC
SEND); the receiver accepts, per (SLID, flow), only the next PSN in sequence. It
ACKs (opcode 0x11, psn = the next PSN it expects, APP.chunk = syndrome 0) every
`rc_ack_every` accepted frames or `rc_ack_delay_ms` (20) after the first unacknowledged
one; a frame past a gap is discarded and NAKed once (syndrome 0x60, PSN sequence
error) until the gap fills; a duplicate is discarded and ACKed again. ACKs are
DATA-kind frames routed to the sender's LID on the SL of paths to it: they take transmit
slots, credits and pauses like data, ahead of data. The sender keeps every frame
until it is acknowledged (at most `rc_window` per flow); a NAK sends every
unacknowledged frame of the flow again in PSN order before any new one
(go-back-N); a timeout without acknowledgement progress (from the measured round
trip, traffic/rc_rto.py; doubled for every timeout in a row up to 8 x, like TCP's
backoff; deferred while our own class is paused or out of credit) resends the
oldest frame, then the rest once it is acknowledged (`rc_timeout_resend`, see
nic_rc.py); after `rc_retry_limit` timeouts in a row the flow fails (reported with
its time in `rc_failures`, never completes).
With RC a flow's job is done when acknowledged. The sender log has a row per
transmission, so a retransmitted PSN appears again with its new send time; the
receive log's `admitted` is 0 dropped by the buffer, 1 accepted, 2 taken by the
link but discarded by the transport (out of sequence or duplicate).

Pause time. One quantum is 512 bit times at the link rate. The emulated link
rate in bits/s is rate_pps x frame_bits, frame_bits = 8 x `frame_bytes` (the
DATA frame as sent: Ethernet + LRH + BTH + APP + payload, no FCS/preamble;
default 52 + 64), so one quantum lasts 512e9 / (rate_pps x 8 x frame_bytes) ns
(`pause_quantum_ns`); the switch's port_config.set_port(pause_quantum_ns) must
be given the same number for the same link.

Rate: the NIC keeps its rate when it can send a slot on time. A send later than
max(4 slots, 5 ms) behind its deadline restarts the schedule; the time so lost
over the time the port had something it was allowed to send is the shortfall,
and `rate_kept` is false (with the numbers in `rate_reason`) above 5 %.

Control (unix stream socket `--control PATH`, or `--control -` for stdin), one
command a line, one JSON reply a line:
    stall | resume | pause_storm on|off | drop_credits N | drop_data N | stats | stop
and the same commands at given times from FLOWS.json "actions": [[t_s, cmd], ...].

FLOWS.json (see docs/traffic.md): {"name", "lid", "mac"?, "vls"?, "sl_to_vl"?,
"flows": [{"flow", "dst_mac", "dlid", "sl", "count" | "chunks"+"frames_per_chunk",
"payload", "coll_id", "step", "start_s", "after": [[coll_id, step, slid], ...]}],
"recvs": [{"coll_id", "step", "slid", "frames"}], "actions": [...]}. A flow
with "after" starts once every listed receive is complete (delivered from the
receive buffer): that is how collectives.py expresses NCCL-style dependencies. With
"compute_s" it starts that much later still (a training job's compute before the
AllReduce of its gradients, traffic/training.py).

Output in --log-dir: NAME.sent.csv (sender.py's log format), NAME.recv.csv
(`flow,psn,send_ns,recv_ns,slid,coll_id,step,chunk,admitted`) and
NAME.summary.json (schema fabriclab.nic/1).
"""

from __future__ import annotations

import errno
import gc
import heapq
import os
import select
import socket
import sys
import time
from array import array
from collections import deque
from collections.abc import Callable

from traffic.flow_control import (
    FlowControl,
    pause_quantum_ns,
)
from traffic.frames import (
    CREDIT_CODEC,
    CREDIT_DST_MAC,
    DATA_CODEC,
    DATA_HEADER_LEN,
    ETHERTYPE_FABRIC,
    LRH_KIND_OFFSET,
    OPCODE_RC_ACK,
    OPCODE_RC_SEND,
    OPCODE_UD,
    PFC_CODEC,
    PFC_DST_MAC,
    Kind,
    SaFrameError,
    SaMethod,
    mac_to_int,
    parse_sa_frame,
    sa_frame,
)
from traffic.nic_config import (
    CREDIT_MOD,
    CREDIT_WINDOW,
    NUM_CLASSES,
    RX_BURST,
    SLIP_LIMIT_NS,
    TIMER_BURST,
    TX_BURST,
    FlowSpec,
    NicConfig,
    Workload,
)
from traffic.nic_control import ControlChannel
from traffic.nic_fc import FlowControlStats, LinkFlowControl
from traffic.nic_jobs import (
    CHUNK_I,
    PSN_I,
    TS_I,
    TxJob,
)
from traffic.nic_rc import RcTransport
from traffic.nic_socket import (  # noqa: F401 (API)
    iface_mac,
    link_down_error,
    open_nic_socket,
    socket_drops,
)
from traffic.nic_summary import NicSummary, RecvRecord, read_recv_log  # noqa: F401 (API)
from traffic.nic_timer import TimerFd
from traffic.vl_arbitration import VlArbiter


class Nic(RcTransport, LinkFlowControl, ControlChannel, NicSummary):
    """The emulator's state and event loop (see the module doc)."""

    def __init__(self, config: NicConfig, workload: Workload, sock: socket.socket | None = None,
                 control_path: str | None = None, control_stdin: bool = False) -> None:
        self.cfg = config
        self.mode = config.mode
        self.work = workload
        self.sock = sock if sock is not None else open_nic_socket(config.iface)
        self.sock.setblocking(False)
        self._send = self.sock.send
        self.src_mac = mac_to_int(config.mac)
        self._credit_dst = mac_to_int(CREDIT_DST_MAC)
        self._pfc_dst = mac_to_int(PFC_DST_MAC)
        self.slid = config.lid or 0
        self.period_ns = 1e9 / config.rate_pps
        self.quantum_ns = pause_quantum_ns(config.rate_pps, config.frame_bytes)
        drain = config.effective_drain_pps
        self.drain_period_ns = 1e9 / drain if drain > 0 else 0.0

        self._init_events(control_path, control_stdin)
        self._init_tx(config)
        self._init_rx(config)
        self._init_rc(config)  # RC transport (see the module doc)
        self._init_workload(workload)

    def _init_events(self, control_path: str | None, control_stdin: bool) -> None:
        """Timers (a heap of [due_ns, seq, callback]; a cancelled entry has callback
        None), the epoll over the timer, the socket and the control channels."""
        self._heap: list[list] = []
        self._seq = 0
        self._timer = TimerFd()
        self._armed_ns: int | None = None
        self._epoll = select.epoll()
        self._epoll.register(self._timer.fd, select.EPOLLIN)
        self._epoll.register(self.sock.fileno(), select.EPOLLIN)
        self._control_server: socket.socket | None = None
        self._control_conns: dict[int, tuple[socket.socket, bytearray]] = {}
        self._control_path = control_path
        if control_path:
            self._open_control(control_path)
        self._stdin = control_stdin
        self._stdin_buf = bytearray()
        if control_stdin:
            os.set_blocking(sys.stdin.fileno(), False)
            self._epoll.register(sys.stdin.fileno(), select.EPOLLIN)
        self.running = False
        self.start_mono = 0
        self.start_real = 0


    def _init_tx(self, config: NicConfig) -> None:
        """The transmit side: per-class queues, pauses, credits, the sent-frames log."""
        self._queues: list[deque[TxJob]] = [deque() for _ in range(NUM_CLASSES)]
        self._active_classes = 0  # bit i: class i has jobs
        self._rr_class = 0
        self._arbiter = VlArbiter(config.vl_arbitration) if config.vl_arbitration else None
        self._next_tx = 0.0
        self._tx_entry: list | None = None
        self._psn: dict[int, int] = {}
        self.paused_until = [0] * NUM_CLASSES
        self._pause_wake: list[list | None] = [None] * NUM_CLASSES
        self.fctbs = [0] * NUM_CLASSES
        self.fccl = [0] * NUM_CLASSES
        self.fccl_known = [False] * NUM_CLASSES
        self._request_entry: list | None = None
        self._credit_rx_ns = [0] * NUM_CLASSES  # when the last CREDIT frame arrived
        self._blocked_since: list[int | None] = [None] * NUM_CLASSES
        self.sent_flow = array("q")
        self.sent_psn = array("q")
        self.sent_ns = array("q")
        self.tx_retries = 0
        self.tx_link_down = 0  # frames sent while our interface was down: lost on the link
        self.max_late_ns = 0
        self.slipped_ns = 0
        self.slips = 0
        self.first_tx_ns: int | None = None
        self.last_tx_ns: int | None = None


    def _init_rx(self, config: NicConfig) -> None:
        """The receive side: the receive buffer per class and what it advertises."""
        self._rxq: list[deque] = [deque() for _ in range(NUM_CLASSES)]
        self._buffered = 0
        self._rr_drain = 0
        self._next_drain = 0.0
        self._drain_entry: list | None = None
        self.stalled = False
        self.abr = [0] * NUM_CLASSES
        self._credit_pending = [0] * NUM_CLASSES
        self._pause_active = [False] * NUM_CLASSES
        self._pause_refresh: list[list | None] = [None] * NUM_CLASSES
        self._credit_vls = set(config.vls)
        self.drop_credits = 0
        self.drop_data = 0  # data frames still to lose at the port (`drop_data N`)
        self._storm_entry: list | None = None
        self.rx_log: list[tuple] = []
        self.rx_data = 0
        self.rx_delivered = 0
        self.rx_not_for_me = 0
        self.rx_drops: dict[str, int] = {}
        self.peak_occupancy = [0] * NUM_CLASSES
        self.fc = FlowControlStats()


    def _init_workload(self, workload: Workload) -> None:
        """The flows waiting for a time or for receives."""
        self._waiting: dict[tuple[int, int, int], list[list]] = {}
        self._recv_left: dict[tuple[int, int, int], int] = {}
        self._recv_done_ns: dict[tuple[int, int, int], int] = {}
        self._jobs: list[TxJob] = []
        self._jobs_left = len(workload.flows)
        for r in workload.recvs:
            self._recv_left[(r.coll_id, r.step, r.slid)] = r.frames
        self._recvs_left = sum(1 for n in self._recv_left.values() if n > 0)
        self.until_done = False
        self.done_ns: int | None = None
        self.socket_drops_total = 0
        self.late_start_ns = 0  # started after --start-at (the peers may have begun already)


    # ------------------------------------------------------------------ timers

    def _at(self, due_ns: float, callback: Callable[[], None]) -> list:
        self._seq += 1
        entry = [int(due_ns), self._seq, callback]
        heapq.heappush(self._heap, entry)
        return entry

    @staticmethod
    def _cancel(entry: list | None) -> None:
        if entry is not None:
            entry[2] = None

    def _run_timers(self) -> None:
        heap = self._heap
        now = time.monotonic_ns()
        for _ in range(TIMER_BURST):
            if not (heap and heap[0][0] <= now and self.running):
                break
            entry = heapq.heappop(heap)
            callback = entry[2]
            if callback is not None:
                entry[2] = None
                callback()
                now = time.monotonic_ns()
        while heap and heap[0][2] is None:
            heapq.heappop(heap)
        if heap and heap[0][0] != self._armed_ns:
            # A deadline already past fires at once, after the socket had its turn.
            self._armed_ns = heap[0][0]
            self._timer.arm(self._armed_ns)

    # ------------------------------------------------------------------ run

    def run(self, duration_s: float, start_at_ns: int | None = None) -> dict:
        """Run for duration_s from the start (CLOCK_REALTIME start_at_ns, default now)."""
        now_real = time.time_ns()
        start_real = max(start_at_ns or now_real, now_real)
        self.late_start_ns = max(0, now_real - start_at_ns) if start_at_ns else 0
        self.start_mono = time.monotonic_ns() + (start_real - now_real)
        self.start_real = start_real
        self.running = True
        end = self.start_mono + int(duration_s * 1e9)
        self._at(end, self.stop)
        if self.mode is FlowControl.CREDIT:
            for vl in sorted(self._credit_vls):  # link init: our buffer, at once
                self._send_credit(vl)
            self._at(time.monotonic_ns() + self.cfg.credit_refresh_ms * 1e6, self._credit_refresh)
        self._at(self.start_mono, self._begin)
        for t, command in self.work.actions:
            self._at(self.start_mono + t * 1e9, lambda c=command: self.command(c))
        # A full collection walks every object Scapy created at import: milliseconds in
        # which no deadline is met. The loop makes no reference cycles that matter for
        # the length of a run, so the collector is off while it runs.
        gc.collect()
        gc.freeze()
        gc.disable()
        try:
            self._loop()
        finally:
            self.running = False
            gc.enable()
        return self.summary()

    def _begin(self) -> None:
        for spec in self.work.flows:
            waiting = [k for k in spec.after if self._recv_left.get(k, 0) > 0]
            entry = [spec, len(waiting), False]  # spec, receives missing, time reached
            for key in waiting:
                self._waiting.setdefault(key, []).append(entry)
            self._at(self.start_mono + spec.start_s * 1e9, lambda e=entry: self._time_reached(e))
        self._check_done()

    def _time_reached(self, entry: list) -> None:
        entry[2] = True
        if entry[1] == 0:
            self._ready(entry[0])

    def _ready(self, spec: FlowSpec) -> None:
        """The flow's time came and its receives arrived: send, after its compute time
        (a training job's iteration computes before its gradients' AllReduce)."""
        if spec.compute_s > 0:
            self._at(time.monotonic_ns() + spec.compute_s * 1e9,
                     lambda: self._activate(spec))
        else:
            self._activate(spec)

    def _loop(self) -> None:
        sock_fd = self.sock.fileno()
        timer_fd = self._timer.fd
        server_fd = self._control_server.fileno() if self._control_server else -1
        stdin_fd = sys.stdin.fileno() if self._stdin else -1
        poll = self._epoll.poll
        self._run_timers()
        while self.running:
            for fd, _ev in poll():
                if fd == sock_fd:
                    self._on_readable()
                elif fd == timer_fd:
                    self._timer.clear()
                    self._armed_ns = None
                elif fd == server_fd:
                    self._accept_control()
                elif fd == stdin_fd:
                    self._read_stdin()
                else:
                    self._read_control(fd)
            self._run_timers()

    def stop(self) -> None:
        self.running = False

    def stop_soon(self, *_signal_args) -> None:
        """From a signal handler: stop at the next loop turn (the timerfd wakes it now)."""
        self.running = False
        self._timer.arm(1)

    def close(self) -> None:
        for conn, _ in self._control_conns.values():
            conn.close()
        if self._control_server:
            self._control_server.close()
            if self._control_path and os.path.exists(self._control_path):
                os.unlink(self._control_path)
        self._epoll.close()
        self._timer.close()
        self.sock.close()

    # ------------------------------------------------------------------ transmit

    def _activate(self, spec: FlowSpec) -> None:
        sl = self._sl_of_lid.get(spec.dlid, spec.sl) if spec.dlid in self._sl_changed \
            else spec.sl
        vl = self._vl_of_sl(sl)
        job = TxJob(spec, vl, self.src_mac, self.slid,
                     OPCODE_RC_SEND if self.rc else OPCODE_UD, sl)
        self._jobs.append(job)
        if spec.count <= 0:
            job.acked_ns = time.time_ns()
            self._job_done(job, job.acked_ns)
            return
        if spec.flow in self._failed_flows:
            return  # the flow's QP is in error: it never completes
        retx = self._retx.get(spec.flow)
        if retx is not None:
            retx.parked.append(job)
            return
        self._queues[vl].append(job)
        self._active_classes |= 1 << vl
        if self.mode is FlowControl.CREDIT and not self.fccl_known[vl]:
            self._credit_vls.add(vl)
        self._kick_tx()

    def _kick_tx(self) -> None:
        """Something may have become sendable: make sure a transmit slot is scheduled."""
        if self._tx_entry is None and self._active_classes and self.running:
            now = time.monotonic_ns()
            if self._next_tx < now:
                self._next_tx = now
            self._tx_entry = self._at(self._next_tx, self._tx_slot)

    def _allowed(self, vl: int, now: int) -> bool:
        if self.mode is FlowControl.PFC:
            until = self.paused_until[vl]
            if until > now:
                if self._pause_wake[vl] is None:
                    self._pause_wake[vl] = self._at(until, lambda v=vl: self._pause_expired(v))
                return False
            return True
        if self.mode is FlowControl.CREDIT:
            if self.fccl_known[vl] and \
                    (self.fccl[vl] - self.fctbs[vl] - 1) % CREDIT_MOD <= CREDIT_WINDOW:
                return True
            if self._request_entry is None:
                # Ask at once before the first FCCL (link init); once credit ran out, only
                # if none came back within an interval (a lost CREDIT frame).
                delay = self.cfg.credit_request_ms * 1e6 if self.fccl_known[vl] else 0
                self._request_entry = self._at(now + delay, self._credit_request)
            return False
        return True

    def _pick(self, now: int) -> int:
        """The class that owns the next slot (next allowed round-robin, or the VL
        arbiter's choice among the allowed), -1 for none."""
        active = self._active_classes
        if self._arbiter is not None:
            ready = 0
            for vl in range(NUM_CLASSES):
                if active >> vl & 1:
                    if self._allowed(vl, now):
                        self._unblocked(vl, now)
                        ready |= 1 << vl
                    else:
                        self._blocked(vl, now)
            vl = self._arbiter.pick(ready)
            if vl < 0 and ready:  # a class the table does not serve still drains, lowest first
                vl = (ready & -ready).bit_length() - 1
            return vl
        if active == 1:  # the common case: one class
            if self._allowed(0, now):
                self._unblocked(0, now)
                return 0
            self._blocked(0, now)
            return -1
        start = self._rr_class
        for i in range(NUM_CLASSES):
            vl = (start + i) % NUM_CLASSES
            if not active >> vl & 1:
                continue
            if self._allowed(vl, now):
                self._unblocked(vl, now)
                self._rr_class = (vl + 1) % NUM_CLASSES
                return vl
            self._blocked(vl, now)
        return -1

    def _blocked(self, vl: int, now: int) -> None:
        if self._blocked_since[vl] is None:
            self._blocked_since[vl] = now

    def _unblocked(self, vl: int, now: int) -> None:
        since = self._blocked_since[vl]
        if since is not None:
            self.fc.blocked_ns[vl] += now - since
            self._blocked_since[vl] = None

    def _tx_slot(self) -> None:
        self._tx_entry = None
        period = self.period_ns
        slip_limit = max(4 * period, SLIP_LIMIT_NS)
        now = time.monotonic_ns()
        for _ in range(TX_BURST):
            vl = self._pick(now)
            if vl < 0:
                return  # idle or blocked: a kick (credit, resume, new job) reschedules
            late = now - self._next_tx
            if late > slip_limit:
                self.slipped_ns += int(late)
                self.slips += 1
                self._next_tx = now
            elif late > self.max_late_ns:
                self.max_late_ns = int(late)
            nbytes = DATA_HEADER_LEN
            if self._ackq[vl]:  # acknowledgements go first: they free the peer's window
                sent = self._transmit_ack(vl)
            else:
                if self.rc and not self._window_open(vl):
                    return  # every flow of the class waits for ACKs: an ACK kicks
                job = self._queues[vl][0]
                if type(job) is TxJob:
                    nbytes += len(job.payload)
                    sent = self._transmit(job)
                else:
                    sent = self._retransmit(job)
            if not sent:
                self.tx_retries += 1
                self._tx_entry = self._at(now + 50_000, self._tx_slot)
                return
            if self._arbiter is not None:
                self._arbiter.charge(vl, nbytes)
            self._next_tx += period
            now = time.monotonic_ns()
            if self._next_tx > now:
                break
        if self._active_classes:
            self._tx_entry = self._at(max(self._next_tx, now), self._tx_slot)

    def _transmit(self, job: TxJob) -> bool:
        """Send the job's next frame; False when the device queue is full (try again)."""
        values = job.values
        flow = job.spec.flow
        psn = self._psn.get(flow, 0)
        i = job.sent
        values[PSN_I] = psn
        values[CHUNK_I] = i if job.chunks is None else job.chunks[i // job.fpc]
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
        self._psn[flow] = psn + 1
        self.sent_flow.append(flow)
        self.sent_psn.append(psn)
        self.sent_ns.append(ts)
        if i == 0:
            job.first_ns = ts
            if self.first_tx_ns is None:
                self.first_tx_ns = ts
        self.last_tx_ns = ts
        vl = job.vl
        self.fctbs[vl] = (self.fctbs[vl] + 1) % CREDIT_MOD
        job.sent = i + 1
        if self.rc:
            self._sent_reliably(flow, psn, job, i, ts)
        queue = self._queues[vl]
        if job.sent >= job.spec.count:
            queue.popleft()
            self._class_idle(vl)
            self._job_done(job, ts)
        elif len(queue) > 1:
            queue.rotate(-1)
        return True

    def _class_idle(self, vl: int) -> None:
        if not self._queues[vl] and not self._ackq[vl]:
            self._active_classes &= ~(1 << vl)

    def _job_done(self, job: TxJob, ts: int) -> None:
        """Every frame of the job sent once; with RC it counts as done once acknowledged."""
        job.done_ns = ts
        if not self.rc or job.acked_ns is not None:
            self._jobs_left -= 1
            self._check_done()

    # ------------------------------------------------------------------ RC transport


    def _vl_of_sl(self, sl: int) -> int:
        return self.cfg.sl_to_vl[sl] & 7 if sl < len(self.cfg.sl_to_vl) else 0


    # ------------------------------------------------------------------ flow-control frames


    # ------------------------------------------------------------------ receive

    def _on_readable(self) -> None:
        recv = self.sock.recv
        fabric = ETHERTYPE_FABRIC >> 8, ETHERTYPE_FABRIC & 0xFF
        for _ in range(RX_BURST):
            try:
                frame = recv(4096)
            except BlockingIOError:
                return
            except OSError as exc:
                if link_down_error(exc):
                    return  # reported once when the link went down; nothing to read
                raise
            if len(frame) < 18:
                continue
            if frame[12] == fabric[0] and frame[13] == fabric[1]:
                kind = frame[LRH_KIND_OFFSET]
                if kind == Kind.DATA and len(frame) >= DATA_HEADER_LEN:
                    self._on_data(frame)
                elif kind == Kind.CREDIT and len(frame) >= CREDIT_CODEC.size:
                    self._on_credit(frame)
                elif kind == Kind.SA:
                    self._on_sa(frame)
            elif frame[12] == 0x88 and frame[13] == 0x08 and len(frame) >= PFC_CODEC.size:
                self._on_pfc(frame)

    def _on_data(self, frame: bytes) -> None:
        f = DATA_CODEC.unpack(frame, 0)
        if self.cfg.lid is not None and f.dlid != self.cfg.lid:
            self.rx_not_for_me += 1
            return
        vl = f.vl & 7
        if f.opcode == OPCODE_RC_ACK:
            # Transport control: it took (and at once freed) a slot of the link's buffer.
            if self.mode is FlowControl.CREDIT:
                self.abr[vl] = (self.abr[vl] + 1) % CREDIT_MOD
                self._credit_vls.add(vl)
                self._drained(vl)
            self._on_ack(f)
            return
        if self.drop_data:  # a burst of link errors (`drop_data N`): as if never received
            self.drop_data -= 1
            self.rx_drops["injected"] = self.rx_drops.get("injected", 0) + 1
            return
        self.rx_data += 1
        now_real = time.time_ns()
        queue = self._rxq[vl]
        admitted = len(queue) < self.cfg.buffer or self.drain_period_ns == 0
        accepted = admitted and (f.opcode != OPCODE_RC_SEND or
                                 self._rc_receive(f, (f.slid, f.flow_id), vl))
        # admitted: 0 dropped (buffer full), 1 accepted, 2 taken by the link but discarded by
        # the RC transport (out of sequence or a duplicate)
        self.rx_log.append((f.flow_id, f.psn, f.send_ts, now_real, f.slid, f.coll_id, f.step,
                            f.chunk, 1 if accepted else 2 if admitted else 0))
        if self.mode is FlowControl.CREDIT:  # received: the sender's FCTBS counted it
            self.abr[vl] = (self.abr[vl] + 1) % CREDIT_MOD
            self._credit_vls.add(vl)
        if not admitted:
            reason = {FlowControl.LOSSY: "buffer_full", FlowControl.PFC: "headroom_overflow",
                      FlowControl.CREDIT: "credit_violation"}[self.mode]
            self.rx_drops[reason] = self.rx_drops.get(reason, 0) + 1
            return
        if self.drain_period_ns == 0:
            if accepted:
                self._deliver(f.coll_id, f.step, f.slid)
            if self.mode is FlowControl.CREDIT:
                self._drained(vl)
            return
        queue.append((f.coll_id, f.step, f.slid) if accepted else None)
        self._buffered += 1
        occupancy = len(queue)
        if occupancy > self.peak_occupancy[vl]:
            self.peak_occupancy[vl] = occupancy
        if self.mode is FlowControl.PFC and occupancy >= self.cfg.xoff and not self._pause_active[vl]:
            self._pause_active[vl] = True
            self._send_pause(vl)
        if self._drain_entry is None and not self.stalled:
            now = time.monotonic_ns()
            if self._next_drain < now:
                self._next_drain = now
            self._drain_entry = self._at(self._next_drain, self._drain_slot)

    def _drain_slot(self) -> None:
        self._drain_entry = None
        if self.stalled or not self._buffered:
            return
        start = self._rr_drain
        for i in range(NUM_CLASSES):
            vl = (start + i) % NUM_CLASSES
            queue = self._rxq[vl]
            if queue:
                self._rr_drain = (vl + 1) % NUM_CLASSES
                entry = queue.popleft()
                self._buffered -= 1
                if entry is not None:  # None: discarded by the RC transport
                    self._deliver(*entry)
                self._drained(vl)
                break
        now = time.monotonic_ns()
        self._next_drain += self.drain_period_ns
        if self._next_drain < now - max(4 * self.drain_period_ns, SLIP_LIMIT_NS):
            self._next_drain = now  # a drain that fell behind this far does not catch up
        if self._buffered and self.running:
            self._drain_entry = self._at(self._next_drain, self._drain_slot)

    def _drained(self, vl: int) -> None:
        """A frame left the receive buffer of class vl: resume / return credits."""
        occupancy = len(self._rxq[vl])
        if self.mode is FlowControl.PFC:
            if self._pause_active[vl] and occupancy <= self.cfg.xon:
                self._pause_active[vl] = False
                self._send_resume(vl)
        elif self.mode is FlowControl.CREDIT:
            self._credit_pending[vl] += 1
            if self._credit_pending[vl] >= self.cfg.credit_coalesce or occupancy == 0:
                self._send_credit(vl)

    def _deliver(self, coll_id: int, step: int, slid: int) -> None:
        self.rx_delivered += 1
        key = (coll_id, step, slid)
        left = self._recv_left.get(key)
        if left is None or left <= 0:
            return
        left -= 1
        self._recv_left[key] = left
        if left == 0:
            self._recv_done_ns[key] = time.time_ns()
            self._recvs_left -= 1
            for entry in self._waiting.pop(key, ()):
                entry[1] -= 1
                if entry[1] == 0 and entry[2]:
                    self._ready(entry[0])
            self._check_done()


    def _on_sa(self, frame: bytes) -> None:
        """The SM's REPORT of changed paths (controller/sa.py): acknowledged; sends that
        start from now on use the new SL (and so VL), ACKs too. Frames already queued
        keep their class: moving them would reorder a flow."""
        try:
            notice = parse_sa_frame(frame)
        except SaFrameError:
            self.sa_bad_frames += 1
            return
        if notice.method is not SaMethod.REPORT:
            return
        self._send_fc(sa_frame(SaMethod.REPORT_RESP, notice.tid, src_mac=self.src_mac,
                               slid=self.slid))
        if notice.tid in self._sa_seen:
            return  # a re-sent REPORT: acknowledged again, applied once
        self._sa_seen.add(notice.tid)
        for record in notice.records:
            self._sl_of_lid[record.dlid] = record.sl
            self._sl_changed.add(record.dlid)
            for key, (mac, _sl, _vl) in list(self._ack_to.items()):
                if key[0] == record.dlid:
                    self._ack_to[key] = (mac, record.sl, self._vl_of_sl(record.sl))
            self.sa_changes.append({"dlid": record.dlid, "sl": record.sl,
                                    "t_ns": time.time_ns()})


    # ------------------------------------------------------------------ control


    # ------------------------------------------------------------------ results

    def _check_done(self) -> None:
        if self._jobs_left == 0 and self._recvs_left == 0 and self.done_ns is None:
            self.done_ns = time.time_ns()
            if self.until_done:
                # Linger so that the last credits and resumes reach the peers.
                self._at(time.monotonic_ns() + 200e6, self.stop)
