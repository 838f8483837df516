"""The NIC emulator: one host port speaking the fabric's link protocol (DESIGN.md).

One process per host, one thread: an epoll loop over a raw AF_PACKET socket,
the control socket and a timerfd that fires at the earliest deadline of a timer
heap (transmit slots, receive-buffer drain, pause expiry, credit refresh,
scheduled actions). Nothing spins: between deadlines the process sleeps.

Transmit side (exactly like a switch egress port, per class = VL = PFC priority):
  * one DATA frame per slot, slots at `rate_pps` on absolute deadlines;
    flows round-robin within a class, classes round-robin;
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
resume. CREDIT: ABR counts admitted frames (mod 4096) and every CREDIT frame
sent advertises FCCL = ABR + free slots, with our FCTBS; frames go out every
`credit_coalesce` drained frames, when the buffer drains empty, every
`credit_refresh_ms` (so a lost one heals), at start-up (link init) and in
answer to a request. A received CREDIT frame sets FCCL and resyncs ABR to the
peer's FCTBS (the link is FIFO, so that FCTBS counts every DATA frame sent
before it): frames lost on the wire cannot leak credits. Flow-control frames
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
until it is acknowledged (at most `rc_window` per flow); a NAK, or
`rc_timeout_ms` without acknowledgement progress (doubled for every timeout in
a row up to 8 x, like TCP's backoff; InfiniBand keeps it fixed), sends every
unacknowledged frame of the flow again in PSN order before any new one
(go-back-N); after `rc_retry_limit` timeouts in a row (about 3.9 s at the
default 100 ms) the flow fails (reported, never completes).
With RC a flow's job is done when acknowledged. The sender log has a row per
transmission, so a retransmitted PSN appears again with its new send time; the
receive log's `admitted` is 0 dropped by the buffer, 1 accepted, 2 taken by the
link but discarded by the transport (out of sequence or duplicate).

Pause time. One quantum is 512 bit times at the link rate. The emulated link
rate in bits/s is rate_pps x frame_bits, frame_bits = 8 x `frame_bytes` (the
DATA frame as sent: Ethernet + LRH + BTH + APP + payload, no FCS/preamble;
default 50 + 64), so one quantum lasts 512e9 / (rate_pps x 8 x frame_bytes) ns
(`pause_quantum_ns`); the switch's port_config.set_port(pause_quantum_ns) must
be given the same number for the same link.

Rate: the NIC keeps its rate when it can send a slot on time. A send later than
max(4 slots, 5 ms) behind its deadline restarts the schedule; the time so lost
over the time the port had something it was allowed to send is the shortfall,
and `rate_kept` is false (with the numbers in `rate_reason`) above 5 %.

Control (unix stream socket `--control PATH`, or `--control -` for stdin), one
command a line, one JSON reply a line:
    stall | resume | pause_storm on|off | drop_credits N | stats | stop
and the same commands at given times from FLOWS.json "actions": [[t_s, cmd], ...].

FLOWS.json (see docs/traffic.md): {"name", "lid", "mac"?, "vls"?, "sl_to_vl"?,
"flows": [{"flow", "dst_mac", "dlid", "sl", "count" | "chunks"+"frames_per_chunk",
"payload", "coll_id", "step", "start_s", "after": [[coll_id, step, slid], ...]}],
"recvs": [{"coll_id", "step", "slid", "frames"}], "actions": [...]}. A flow
with "after" starts once every listed receive is complete (delivered from the
receive buffer): that is how collectives.py expresses NCCL-style dependencies.

Output in --log-dir: NAME.sent.csv (sender.py's log format), NAME.recv.csv
(`flow,psn,send_ns,recv_ns,slid,coll_id,step,chunk,admitted`) and
NAME.summary.json (schema fabriclab.nic/1).
"""

from __future__ import annotations

import argparse
import ctypes
import errno
import gc
import heapq
import json
import os
import select
import signal
import socket
import struct
import sys
import time
from array import array
from collections import deque, namedtuple
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

from traffic.flow_control import (
    DEFAULT_FRAME_BYTES,
    PFC_XOFF,
    PFC_XON,
    FlowControl,
    pause_quantum_ns,
)
from traffic.frames import (
    CREDIT_CODEC,
    CREDIT_DST_MAC,
    DATA_CODEC,
    DATA_HEADER_LEN,
    ETHERTYPE_FABRIC,
    ETHERTYPE_MAC_CONTROL,
    FC_FRAME_BYTES,
    LRH_KIND_OFFSET,
    OPCODE_RC_ACK,
    OPCODE_RC_SEND,
    OPCODE_UD,
    PFC_CODEC,
    PFC_DST_MAC,
    PFC_OPCODE,
    PFC_PAUSE_QUANTA,
    SYNDROME_ACK,
    SYNDROME_NAK_SEQ,
    CreditOp,
    Kind,
    SaFrameError,
    SaMethod,
    mac_to_int,
    parse_sa_frame,
    sa_frame,
)
from traffic.sender import APP_LEN, BTH_LEN, write_log_rows

SUMMARY_SCHEMA = "fabriclab.nic/1"
RECV_LOG_HEADER = ("# fabriclab receiver log v1 clock=CLOCK_REALTIME\n"
                   "flow,psn,send_ns,recv_ns,slid,coll_id,step,chunk,admitted\n")
NUM_CLASSES = 8
CREDIT_MOD = 4096
CREDIT_WINDOW = 2048  # IB: may send iff (FCCL - (FCTBS + blocks)) mod 4096 <= 2048
RATE_SHORTFALL_LIMIT = 0.05
SOL_PACKET = 263
PACKET_STATISTICS = 6
PACKET_IGNORE_OUTGOING = 23  # we must not receive our own transmissions
RX_BURST = 64  # frames read per wake-up before timers get a turn
TX_BURST = 16  # late slots sent back to back before the loop looks at the socket again
SLIP_LIMIT_NS = 5e6  # a send later than this (or 4 slots) restarts the schedule: not caught up
TIMER_BURST = 64  # due timers run per wake-up, likewise
TRANSPORTS = ("ud", "rc")
RC_BACKOFF_MAX_SHIFT = 3  # the retransmission timeout grows to 8 x rc_timeout_ms at most


class NicConfigError(Exception):
    """A NIC option or FLOWS.json entry that cannot work: says which and why."""


@dataclass(frozen=True)
class NicConfig:
    """One NIC port: link protocol, rates, receive buffer (sizes in frames)."""

    iface: str
    mode: FlowControl
    rate_pps: float
    mac: str
    name: str = "nic"
    lid: int | None = None  # DATA frames to another DLID are ignored (None: accept all)
    buffer: int = 64
    xoff: int = PFC_XOFF
    xon: int = PFC_XON
    drain_pps: float | None = None  # None: rate_pps; 0: no buffering
    credit_coalesce: int = 4
    credit_refresh_ms: float = 5.0
    credit_request_ms: float = 20.0
    frame_bytes: int = DEFAULT_FRAME_BYTES
    vls: tuple[int, ...] = (0,)  # the classes this port advertises credits for at init
    sl_to_vl: tuple[int, ...] = tuple(range(16))
    storm_interval_ms: float = 1.0
    storm_classes: int = 0xFF
    transport: str = "ud"  # "rc": acknowledged, go-back-N retransmission (InfiniBand RC)
    rc_timeout_ms: float = 100.0  # no acknowledgement progress for this long: go back
    rc_retry_limit: int = 7  # timeouts in a row without progress: the flow fails (IB retry_cnt)
    rc_ack_every: int = 16  # frames received in order per ACK ...
    rc_ack_delay_ms: float = 20.0  # ... or this long after the flow's first unacked one
    rc_window: int = 128  # unacknowledged frames per flow at most (bounds a go-back)
    sl_of_lid: tuple[tuple[int, int], ...] = ()  # the SL of paths to a LID (ACKs use it)

    def __post_init__(self) -> None:
        if self.transport not in TRANSPORTS:
            raise NicConfigError(f"--transport must be one of {', '.join(TRANSPORTS)}, "
                                 f"got {self.transport!r}")
        if self.rc_timeout_ms <= 0 or self.rc_retry_limit < 1 or self.rc_ack_every < 1 \
                or self.rc_window < self.rc_ack_every:
            raise NicConfigError("RC needs --rc-timeout-ms > 0, --rc-retry-limit >= 1, "
                                 "--rc-ack-every >= 1 and --rc-window >= --rc-ack-every")
        if self.rate_pps <= 0:
            raise NicConfigError(f"--rate-pps must be > 0, got {self.rate_pps}")
        if self.buffer < 1:
            raise NicConfigError(f"--buffer must be >= 1 frame, got {self.buffer}")
        if self.mode is FlowControl.PFC and not 0 <= self.xon < self.xoff <= self.buffer:
            raise NicConfigError(f"PFC needs 0 <= xon < xoff <= buffer, got xon={self.xon} "
                                 f"xoff={self.xoff} buffer={self.buffer}")
        if self.mode is FlowControl.CREDIT and not 1 <= self.buffer <= CREDIT_WINDOW:
            raise NicConfigError(f"CREDIT buffer must be 1..{CREDIT_WINDOW} blocks, "
                                 f"got {self.buffer}")
        if self.credit_coalesce < 1:
            raise NicConfigError(f"--credit-coalesce must be >= 1, got {self.credit_coalesce}")

    @property
    def effective_drain_pps(self) -> float:
        return self.rate_pps if self.drain_pps is None else self.drain_pps


@dataclass(frozen=True)
class FlowSpec:
    """One stream of DATA frames from this port (a plain flow or one collective send)."""

    flow: int
    dst_mac: str
    dlid: int
    count: int
    sl: int = 0
    payload: int = 64
    dest_qp: int = 0
    coll_id: int = 0
    step: int = 0
    chunks: tuple[int, ...] | None = None  # collective chunk of each block of frames
    frames_per_chunk: int = 1
    start_s: float = 0.0
    after: tuple[tuple[int, int, int], ...] = ()  # receives (coll_id, step, slid) to wait for

    @classmethod
    def from_json(cls, d: dict) -> FlowSpec:
        d = dict(d)
        if "chunks" in d:
            d["chunks"] = tuple(d["chunks"])
            d.setdefault("count", len(d["chunks"]) * d.get("frames_per_chunk", 1))
        d["after"] = tuple(tuple(k) for k in d.get("after", ()))
        try:
            return cls(**d)
        except TypeError as exc:
            raise NicConfigError(f"flow entry {d}: {exc}") from None


@dataclass(frozen=True)
class RecvSpec:
    """Frames this port expects of one collective transfer, keyed (coll_id, step, slid)."""

    coll_id: int
    step: int
    slid: int
    frames: int


@dataclass(frozen=True)
class Workload:
    flows: tuple[FlowSpec, ...] = ()
    recvs: tuple[RecvSpec, ...] = ()
    actions: tuple[tuple[float, str], ...] = ()


def load_flows_file(path: Path | str) -> tuple[dict, Workload]:
    """(port settings from the file: name, lid, mac, vls, sl_to_vl; the workload)."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise NicConfigError(f"{path}: {exc}") from None
    port = {k: data[k] for k in ("name", "lid", "mac", "vls", "sl_to_vl", "transport")
            if k in data}
    try:
        port["sl_of_lid"] = tuple((int(lid), int(sl))
                                  for lid, sl in data.get("sl_of_lid", {}).items())
    except (AttributeError, TypeError, ValueError):
        raise NicConfigError(f"{path}: sl_of_lid must map LIDs to SLs, got "
                             f"{data.get('sl_of_lid')!r}") from None
    for key in ("vls", "sl_to_vl"):
        if key in port:
            port[key] = tuple(port[key])
    try:
        recvs = tuple(RecvSpec(**r) for r in data.get("recvs", ()))
    except TypeError as exc:
        raise NicConfigError(f"{path}: bad recvs entry: {exc}") from None
    workload = Workload(flows=tuple(FlowSpec.from_json(f) for f in data.get("flows", ())),
                        recvs=recvs,
                        actions=tuple((float(t), str(c)) for t, c in data.get("actions", ())))
    return port, workload


# --------------------------------------------------------------------------- timerfd

_libc = ctypes.CDLL(None, use_errno=True)
_CLOCK_MONOTONIC = 1
_TFD_NONBLOCK_CLOEXEC = os.O_NONBLOCK | os.O_CLOEXEC
_TFD_TIMER_ABSTIME = 1


class _Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


class _Itimerspec(ctypes.Structure):
    _fields_ = [("it_interval", _Timespec), ("it_value", _Timespec)]


class TimerFd:
    """A CLOCK_MONOTONIC timerfd armed at absolute ns deadlines (epoll's own timeout is ms)."""

    def __init__(self) -> None:
        fd = _libc.timerfd_create(_CLOCK_MONOTONIC, _TFD_NONBLOCK_CLOEXEC)
        if fd < 0:
            raise OSError(ctypes.get_errno(), "timerfd_create failed")
        self.fd = fd
        self._spec = _Itimerspec()
        self._settime = _libc.timerfd_settime
        self._ref = ctypes.byref(self._spec)

    def arm(self, due_ns: int) -> None:
        due_ns = max(due_ns, 1)  # 0 would disarm
        self._spec.it_value.tv_sec, self._spec.it_value.tv_nsec = divmod(due_ns, 1_000_000_000)
        if self._settime(self.fd, _TFD_TIMER_ABSTIME, self._ref, None) < 0:
            raise OSError(ctypes.get_errno(), "timerfd_settime failed")

    def clear(self) -> None:
        try:
            os.read(self.fd, 8)
        except BlockingIOError:
            pass

    def close(self) -> None:
        os.close(self.fd)


# --------------------------------------------------------------------------- transmit jobs


class _TxJob:
    """A flow being transmitted: the frame template and how far it got."""

    __slots__ = ("spec", "vl", "values", "payload", "sent", "chunks", "fpc", "first_ns",
                 "done_ns", "acked", "acked_ns")

    def __init__(self, spec: FlowSpec, vl: int, src_mac: int, slid: int,
                 opcode: int = OPCODE_UD, sl: int | None = None) -> None:
        self.spec = spec
        self.vl = vl
        values = {
            "dst_addr": mac_to_int(spec.dst_mac), "src_addr": src_mac,
            "ether_type": ETHERTYPE_FABRIC, "vl": vl, "sl": spec.sl if sl is None else sl, "kind": Kind.DATA,
            "dlid": spec.dlid, "slid": slid, "pkt_len": BTH_LEN + APP_LEN + spec.payload,
            "opcode": opcode, "dest_qp": spec.dest_qp, "psn": 0, "flow_id": spec.flow,
            "coll_id": spec.coll_id, "step": spec.step, "chunk": 0, "send_ts": 0,
        }
        self.values = [int(values[name]) for name in DATA_CODEC.fields]
        self.payload = bytes(spec.payload)
        self.sent = 0
        self.chunks = spec.chunks
        self.fpc = max(1, spec.frames_per_chunk)
        self.first_ns: int | None = None
        self.done_ns: int | None = None  # every frame sent once
        self.acked = 0  # RC: frames acknowledged
        self.acked_ns: int | None = None  # RC: every frame acknowledged

    def chunk_of(self, i: int) -> int:
        return i if self.chunks is None else self.chunks[i // self.fpc]


class _Retransmission:
    """RC go-back-N: the flow's unacknowledged frames, sent again in PSN order.

    While it runs it stands in the class queue in place of the flow's jobs
    (parked), so that no new PSN overtakes a retransmitted one."""

    __slots__ = ("flow", "vl", "entries", "pos", "parked")

    def __init__(self, flow: int, vl: int, entries: list) -> None:
        self.flow = flow
        self.vl = vl
        self.entries = entries  # [(psn, job, frame index)]
        self.pos = 0
        self.parked: list[_TxJob] = []


_PSN_I = DATA_CODEC.fields.index("psn")
_CHUNK_I = DATA_CODEC.fields.index("chunk")
_TS_I = DATA_CODEC.fields.index("send_ts")
_ACK_FIELDS = {name: DATA_CODEC.fields.index(name)
               for name in ("dst_addr", "vl", "sl", "dlid", "flow_id", "psn", "chunk", "send_ts")}


@dataclass
class RcStats:
    """The RC transport's counters (all zero with transport "ud")."""

    acks_sent: int = 0
    naks_sent: int = 0
    acks_received: int = 0
    naks_received: int = 0
    retransmitted: int = 0  # frames sent again
    go_backs: int = 0  # retransmissions started (by a NAK or a timeout)
    timeouts: int = 0
    out_of_sequence: int = 0  # received past a gap: discarded, NAKed once
    duplicates: int = 0  # received again: discarded, acknowledged
    flows_failed: int = 0  # gave up after rc_retry_limit timeouts


@dataclass
class FlowControlStats:
    pauses_sent: int = 0
    resumes_sent: int = 0
    storm_pauses_sent: int = 0
    pauses_received: int = 0
    resumes_received: int = 0
    pfc_frames_ignored: int = 0  # pauses received outside PFC mode
    credit_frames_sent: int = 0
    credit_requests_sent: int = 0
    credit_frames_dropped: int = 0  # by `drop_credits`
    credit_frames_received: int = 0
    credit_requests_received: int = 0
    blocked_ns: list[int] = field(default_factory=lambda: [0] * NUM_CLASSES)


class Nic:
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

        # timers: heap of [due_ns, seq, callback]; a cancelled entry has callback None
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

        # transmit side
        self._queues: list[deque[_TxJob]] = [deque() for _ in range(NUM_CLASSES)]
        self._active_classes = 0  # bit i: class i has jobs
        self._rr_class = 0
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
        self.max_late_ns = 0
        self.slipped_ns = 0
        self.slips = 0
        self.first_tx_ns: int | None = None
        self.last_tx_ns: int | None = None

        # receive side
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
        self._storm_entry: list | None = None
        self.rx_log: list[tuple] = []
        self.rx_data = 0
        self.rx_delivered = 0
        self.rx_not_for_me = 0
        self.rx_drops: dict[str, int] = {}
        self.peak_occupancy = [0] * NUM_CLASSES
        self.fc = FlowControlStats()

        # RC transport (see the module doc)
        self.rc = config.transport == "rc"
        self.rc_stats = RcStats()
        self.rc_errors: list[str] = []
        self._inflight: dict[int, deque] = {}  # flow -> (psn, job, i) sent, unacknowledged
        self._progress_ns: dict[int, int] = {}  # flow -> last acknowledgement progress
        self._rto_entry: dict[int, list] = {}  # flow -> its retransmission timer
        self._retries: dict[int, int] = {}  # flow -> timeouts in a row without progress
        self._retx: dict[int, _Retransmission] = {}
        self._failed_flows: set[int] = set()
        self._window_waits = 0
        self._sl_of_lid = dict(config.sl_of_lid)
        self._sl_changed: set[int] = set()  # DLIDs whose SL an SA REPORT changed
        self._sa_seen: set[int] = set()
        self.sa_changes: list[dict] = []
        self.sa_bad_frames = 0
        self.rto_ns = int(config.rc_timeout_ms * 1e6)
        self._rx_expected: dict[tuple[int, int], int] = {}  # (slid, flow) -> next PSN
        self._rx_nak_sent: set[tuple[int, int]] = set()  # until the expected PSN arrives
        self._rx_unacked: dict[tuple[int, int], int] = {}  # accepted since the last ACK
        self._rx_unacked_since: dict[tuple[int, int], int] = {}  # ... the first of them
        self._ack_to: dict[tuple[int, int], tuple[int, int, int]] = {}  # -> (mac, sl, vl)
        self._ackq: list[deque] = [deque() for _ in range(NUM_CLASSES)]
        self._ack_queued: dict[tuple[int, int], int] = {}  # key -> syndrome, while queued
        self._ack_delay_entry: list | None = None
        ack = {
            "dst_addr": 0, "src_addr": self.src_mac, "ether_type": ETHERTYPE_FABRIC, "vl": 0,
            "sl": 0, "kind": Kind.DATA, "dlid": 0, "slid": self.slid,
            "pkt_len": BTH_LEN + APP_LEN, "opcode": OPCODE_RC_ACK, "dest_qp": 0, "psn": 0,
            "flow_id": 0, "coll_id": 0, "step": 0, "chunk": 0, "send_ts": 0,
        }
        self._ack_values = [int(ack[name]) for name in DATA_CODEC.fields]

        # the workload: flows waiting for a time or for receives
        self._waiting: dict[tuple[int, int, int], list[list]] = {}
        self._recv_left: dict[tuple[int, int, int], int] = {}
        self._recv_done_ns: dict[tuple[int, int, int], int] = {}
        self._jobs: list[_TxJob] = []
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
            self._activate(entry[0])

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
        job = _TxJob(spec, vl, self.src_mac, self.slid,
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
        """The class that owns the next slot (next allowed round-robin), -1 for none."""
        active = self._active_classes
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
            if self._ackq[vl]:  # acknowledgements go first: they free the peer's window
                sent = self._transmit_ack(vl)
            else:
                if self.rc and not self._window_open(vl):
                    return  # every flow of the class waits for ACKs: an ACK kicks
                job = self._queues[vl][0]
                sent = self._transmit(job) if type(job) is _TxJob else self._retransmit(job)
            if not sent:
                self.tx_retries += 1
                self._tx_entry = self._at(now + 50_000, self._tx_slot)
                return
            self._next_tx += period
            now = time.monotonic_ns()
            if self._next_tx > now:
                break
        if self._active_classes:
            self._tx_entry = self._at(max(self._next_tx, now), self._tx_slot)

    def _transmit(self, job: _TxJob) -> bool:
        """Send the job's next frame; False when the device queue is full (try again)."""
        values = job.values
        flow = job.spec.flow
        psn = self._psn.get(flow, 0)
        i = job.sent
        values[_PSN_I] = psn
        values[_CHUNK_I] = i if job.chunks is None else job.chunks[i // job.fpc]
        ts = time.time_ns()
        values[_TS_I] = ts
        try:
            self._send(DATA_CODEC.pack_values(*values) + job.payload)
        except OSError as exc:
            if exc.errno in (errno.ENOBUFS, errno.EAGAIN):
                return False
            raise
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

    def _job_done(self, job: _TxJob, ts: int) -> None:
        """Every frame of the job sent once; with RC it counts as done once acknowledged."""
        job.done_ns = ts
        if not self.rc or job.acked_ns is not None:
            self._jobs_left -= 1
            self._check_done()

    # ------------------------------------------------------------------ RC transport

    def _sent_reliably(self, flow: int, psn: int, job: _TxJob, i: int, ts: int) -> None:
        inflight = self._inflight.get(flow)
        if inflight is None:
            inflight = self._inflight[flow] = deque()
        if not inflight:
            self._progress_ns[flow] = time.monotonic_ns()
            if flow not in self._rto_entry:
                self._arm_rto(flow)
        inflight.append((psn, job, i))

    def _vl_of_sl(self, sl: int) -> int:
        return self.cfg.sl_to_vl[sl] & 7 if sl < len(self.cfg.sl_to_vl) else 0

    def _window_open(self, vl: int) -> bool:
        """Rotate the class queue to a job whose flow has fewer than rc_window unacknowledged
        frames (a retransmission always may go); False if there is none."""
        queue, window, inflight = self._queues[vl], self.cfg.rc_window, self._inflight
        for _ in range(len(queue)):
            job = queue[0]
            if type(job) is not _TxJob or len(inflight.get(job.spec.flow, ())) < window:
                return True
            queue.rotate(-1)
        self._window_waits += 1
        return False

    def _arm_rto(self, flow: int) -> None:
        due = self._progress_ns[flow] + self._rto(flow)
        self._rto_entry[flow] = self._at(due, lambda f=flow: self._rto_fired(f))

    def _rto_fired(self, flow: int) -> None:
        del self._rto_entry[flow]
        inflight = self._inflight.get(flow)
        if not inflight or flow in self._failed_flows:
            return
        now = time.monotonic_ns()
        if now - self._progress_ns[flow] < self._rto(flow):  # progress since it was armed
            self._arm_rto(flow)
            return
        self.rc_stats.timeouts += 1
        retries = self._retries.get(flow, 0) + 1
        self._retries[flow] = retries
        if retries > self.cfg.rc_retry_limit:
            self._fail_flow(flow, f"flow {flow}: {retries - 1} retransmission timeouts in a "
                                  f"row, PSN {inflight[0][0]} never acknowledged")
            return
        self._go_back(flow)
        self._progress_ns[flow] = now
        self._arm_rto(flow)

    def _rto(self, flow: int) -> int:
        """The retransmission timeout, doubled for every timeout in a row up to 8 x (a
        receiver that stalls for a second or two is waited for, rather than given up on
        after 7 x rc_timeout; the cap keeps a resumed receiver's wait short)."""
        return self.rto_ns << min(self._retries.get(flow, 0), RC_BACKOFF_MAX_SHIFT)

    def _go_back(self, flow: int) -> None:
        """Send every unacknowledged frame of the flow again, in PSN order, before new ones."""
        inflight = self._inflight.get(flow)
        if not inflight:
            return
        self.rc_stats.go_backs += 1
        entries = list(inflight)
        retx = self._retx.get(flow)
        if retx is not None:  # already going back: start over from the oldest
            retx.entries, retx.pos = entries, 0
            return
        vl = entries[0][1].vl
        retx = self._retx[flow] = _Retransmission(flow, vl, entries)
        queue = self._queues[vl]
        keep = deque()
        for job in queue:
            if type(job) is _TxJob and job.spec.flow == flow:
                retx.parked.append(job)
            else:
                keep.append(job)
        keep.appendleft(retx)
        self._queues[vl] = keep
        self._active_classes |= 1 << vl
        self._kick_tx()

    def _retransmit(self, retx: _Retransmission) -> bool:
        entries, flow = retx.entries, retx.flow
        inflight = self._inflight.get(flow)
        oldest = inflight[0][0] if inflight else None
        while retx.pos < len(entries) and (oldest is None or entries[retx.pos][0] < oldest):
            retx.pos += 1  # acknowledged meanwhile
        if retx.pos < len(entries):
            psn, job, i = entries[retx.pos]
            values = job.values
            values[_PSN_I] = psn
            values[_CHUNK_I] = job.chunk_of(i)
            ts = time.time_ns()
            values[_TS_I] = ts
            try:
                self._send(DATA_CODEC.pack_values(*values) + job.payload)
            except OSError as exc:
                if exc.errno in (errno.ENOBUFS, errno.EAGAIN):
                    return False
                raise
            self.sent_flow.append(flow)
            self.sent_psn.append(psn)
            self.sent_ns.append(ts)
            self.last_tx_ns = ts
            self.fctbs[retx.vl] = (self.fctbs[retx.vl] + 1) % CREDIT_MOD
            self.rc_stats.retransmitted += 1
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
        retx = self._retx.pop(flow, None)
        for vl in range(NUM_CLASSES):
            queue = self._queues[vl]
            if any((j is retx) or (type(j) is _TxJob and j.spec.flow == flow) for j in queue):
                self._queues[vl] = deque(j for j in queue if j is not retx and not (
                    type(j) is _TxJob and j.spec.flow == flow))
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
        progress = False
        while inflight and inflight[0][0] < psn:
            _psn, job, _i = inflight.popleft()
            job.acked += 1
            progress = True
            if job.acked >= job.spec.count:
                job.acked_ns = time.time_ns()
                if job.done_ns is not None:
                    self._jobs_left -= 1
                    self._check_done()
        if progress:
            self._progress_ns[flow] = time.monotonic_ns()
            self._retries[flow] = 0
            self._kick_tx()  # the flow's window may have opened
        if nak and inflight and flow not in self._retx:
            self._go_back(flow)

    def _rc_receive(self, f, key: tuple[int, int], vl: int) -> bool:
        """Transport check of an admitted RC frame: True if it is the next in sequence."""
        expected = self._rx_expected.get(key, 0)
        if key not in self._ack_to:  # ACKs travel on the SL of paths to the sender
            sl = self._sl_of_lid.get(f.slid, f.sl)
            self._ack_to[key] = (f.src_addr, sl, self._vl_of_sl(sl))
        if f.psn == expected:
            self._rx_expected[key] = expected + 1
            self._rx_nak_sent.discard(key)
            unacked = self._rx_unacked.get(key, 0) + 1
            self._rx_unacked[key] = unacked
            if unacked >= self.cfg.rc_ack_every:
                self._queue_ack(key, SYNDROME_ACK)
            elif unacked == 1:
                now = time.monotonic_ns()
                self._rx_unacked_since[key] = now
                if self._ack_delay_entry is None:
                    self._ack_delay_entry = self._at(now + self.cfg.rc_ack_delay_ms * 1e6,
                                                     self._ack_delayed)
            return True
        if f.psn > expected:
            self.rc_stats.out_of_sequence += 1
            if key not in self._rx_nak_sent:
                self._rx_nak_sent.add(key)
                self._queue_ack(key, SYNDROME_NAK_SEQ)
        else:
            self.rc_stats.duplicates += 1
            self._queue_ack(key, SYNDROME_ACK)
        return False

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
        mac, sl, _vl = self._ack_to[key]
        values, at = self._ack_values, _ACK_FIELDS
        values[at["dst_addr"]], values[at["vl"]], values[at["sl"]] = mac, vl, sl
        values[at["dlid"]], values[at["flow_id"]] = key
        values[at["psn"]] = self._rx_expected.get(key, 0)
        values[at["chunk"]] = syndrome
        values[at["send_ts"]] = time.time_ns()
        try:
            self._send(DATA_CODEC.pack_values(*values))
        except OSError as exc:
            if exc.errno in (errno.ENOBUFS, errno.EAGAIN):
                return False
            raise
        self._ackq[vl].popleft()
        del self._ack_queued[key]
        self.fctbs[vl] = (self.fctbs[vl] + 1) % CREDIT_MOD
        if syndrome == SYNDROME_NAK_SEQ:
            self.rc_stats.naks_sent += 1
        else:
            self.rc_stats.acks_sent += 1
        self._class_idle(vl)
        return True

    def _pause_expired(self, vl: int) -> None:
        self._pause_wake[vl] = None
        self._kick_tx()

    def _credit_request(self) -> None:
        """While a class waits for credit, ask the peer for its FCCL every credit_request_ms."""
        self._request_entry = None
        now = time.monotonic_ns()
        interval = self.cfg.credit_request_ms * 1e6
        waiting = [vl for vl in range(NUM_CLASSES)
                   if self._active_classes >> vl & 1 and not self._allowed_quiet(vl)]
        for vl in waiting:
            if not self.fccl_known[vl] or now - self._credit_rx_ns[vl] >= interval:
                self._send_credit(vl, CreditOp.REQUEST)
        if waiting and self.running:
            self._request_entry = self._at(now + interval, self._credit_request)

    def _allowed_quiet(self, vl: int) -> bool:
        return self.fccl_known[vl] and \
            (self.fccl[vl] - self.fctbs[vl] - 1) % CREDIT_MOD <= CREDIT_WINDOW

    # ------------------------------------------------------------------ flow-control frames

    def _send_fc(self, frame: bytes) -> bool:
        for _ in range(100):
            try:
                self._send(frame)
                return True
            except OSError as exc:
                if exc.errno not in (errno.ENOBUFS, errno.EAGAIN):
                    raise
                time.sleep(20e-6)
        return False

    def _pfc(self, class_enable: int, quanta: int) -> bytes:
        q = [quanta if class_enable >> i & 1 else 0 for i in range(NUM_CLASSES)]
        frame = PFC_CODEC.pack_values(self._pfc_dst, self.src_mac,
                                      ETHERTYPE_MAC_CONTROL, PFC_OPCODE, class_enable, *q)
        return frame + bytes(FC_FRAME_BYTES - len(frame))

    def _send_pause(self, vl: int) -> None:
        if self._send_fc(self._pfc(1 << vl, PFC_PAUSE_QUANTA)):
            self.fc.pauses_sent += 1
        self._cancel(self._pause_refresh[vl])
        refresh = PFC_PAUSE_QUANTA * self.quantum_ns / 2  # re-sent before it would expire
        self._pause_refresh[vl] = self._at(time.monotonic_ns() + refresh,
                                           lambda v=vl: self._refresh_pause(v))

    def _refresh_pause(self, vl: int) -> None:
        self._pause_refresh[vl] = None
        if self._pause_active[vl]:
            self._send_pause(vl)

    def _send_resume(self, vl: int) -> None:
        self._cancel(self._pause_refresh[vl])
        self._pause_refresh[vl] = None
        if self._send_fc(self._pfc(1 << vl, 0)):
            self.fc.resumes_sent += 1

    def _send_credit(self, vl: int, op: CreditOp = CreditOp.NORMAL) -> None:
        """A CREDIT frame for class vl: our FCCL (ABR + free slots) and our FCTBS."""
        if self.drop_credits > 0:
            self.drop_credits -= 1
            self.fc.credit_frames_dropped += 1
            return
        free = self.cfg.buffer - len(self._rxq[vl])
        fccl = (self.abr[vl] + free) % CREDIT_MOD
        frame = CREDIT_CODEC.pack_values(
            self._credit_dst, self.src_mac, ETHERTYPE_FABRIC, vl, 0, Kind.CREDIT, 0, self.slid,
            4, int(op), self.fctbs[vl], vl, fccl)
        if self._send_fc(frame + bytes(FC_FRAME_BYTES - len(frame))):
            if op is CreditOp.REQUEST:
                self.fc.credit_requests_sent += 1
            else:
                self.fc.credit_frames_sent += 1
        self._credit_pending[vl] = 0

    def _credit_refresh(self) -> None:
        if not self.stalled:
            for vl in sorted(self._credit_vls):
                self._send_credit(vl)
        self._at(time.monotonic_ns() + self.cfg.credit_refresh_ms * 1e6, self._credit_refresh)

    def _storm(self) -> None:
        if self._send_fc(self._pfc(self.cfg.storm_classes, PFC_PAUSE_QUANTA)):
            self.fc.storm_pauses_sent += 1
        self._storm_entry = self._at(time.monotonic_ns() + self.cfg.storm_interval_ms * 1e6,
                                     self._storm)

    # ------------------------------------------------------------------ receive

    def _on_readable(self) -> None:
        recv = self.sock.recv
        fabric = ETHERTYPE_FABRIC >> 8, ETHERTYPE_FABRIC & 0xFF
        for _ in range(RX_BURST):
            try:
                frame = recv(4096)
            except BlockingIOError:
                return
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
        if not admitted:
            reason = {FlowControl.LOSSY: "buffer_full", FlowControl.PFC: "headroom_overflow",
                      FlowControl.CREDIT: "credit_violation"}[self.mode]
            self.rx_drops[reason] = self.rx_drops.get(reason, 0) + 1
            return
        if self.mode is FlowControl.CREDIT:
            self.abr[vl] = (self.abr[vl] + 1) % CREDIT_MOD
            self._credit_vls.add(vl)
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
                    self._activate(entry[0])
            self._check_done()

    def _on_credit(self, frame: bytes) -> None:
        c = CREDIT_CODEC.unpack(frame, 0)
        vl = c.credit_vl & 7
        if c.op == CreditOp.REQUEST:
            self.fc.credit_requests_received += 1
        else:
            self.fc.credit_frames_received += 1
        if self.mode is not FlowControl.CREDIT:
            return
        self.fccl[vl] = c.fccl
        self.fccl_known[vl] = True
        self._credit_rx_ns[vl] = time.monotonic_ns()
        # The link is FIFO: the peer's FCTBS counts every DATA frame it sent before this one.
        self.abr[vl] = c.fctbs
        self._credit_vls.add(vl)
        if c.op == CreditOp.REQUEST and not self.stalled:
            self._send_credit(vl)
        self._kick_tx()

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

    def _on_pfc(self, frame: bytes) -> None:
        p = PFC_CODEC.unpack(frame, 0)
        if p.opcode != PFC_OPCODE:
            return
        if self.mode is not FlowControl.PFC:
            self.fc.pfc_frames_ignored += 1
            return
        now = time.monotonic_ns()
        quanta = p[-NUM_CLASSES:]
        resumed = paused = False
        for vl in range(NUM_CLASSES):
            if p.class_enable >> vl & 1:
                q = quanta[vl]
                self.paused_until[vl] = now + int(q * self.quantum_ns)
                if q:
                    paused = True
                else:
                    resumed = True
                    self._cancel(self._pause_wake[vl])
                    self._pause_wake[vl] = None
        # counted per frame: one frame may pause some classes and resume others
        self.fc.pauses_received += paused
        self.fc.resumes_received += resumed
        if resumed:
            self._kick_tx()

    # ------------------------------------------------------------------ control

    def command(self, line: str) -> dict:
        """Apply one control command; returns the reply (see the module doc)."""
        words = line.split()
        if not words:
            return {"ok": False, "error": "empty command"}
        cmd, args = words[0], words[1:]
        if cmd == "stall":
            self.stalled = True
            self._cancel(self._drain_entry)
            self._drain_entry = None
        elif cmd == "resume":
            self.stalled = False
            if self._buffered and self._drain_entry is None:
                self._next_drain = max(self._next_drain, time.monotonic_ns())
                self._drain_entry = self._at(self._next_drain, self._drain_slot)
        elif cmd == "pause_storm" and args in (["on"], ["off"]):
            self._cancel(self._storm_entry)
            self._storm_entry = None
            if args[0] == "on":
                self._storm()
            else:
                self._send_fc(self._pfc(self.cfg.storm_classes, 0))
        elif cmd == "drop_credits" and len(args) == 1 and args[0].isdigit():
            self.drop_credits += int(args[0])
        elif cmd == "stats":
            return {"ok": True, "stats": self.summary()}
        elif cmd == "stop":
            self.stop()
        else:
            return {"ok": False, "error": f"unknown command {line.strip()!r}; expected stall, "
                                          "resume, pause_storm on|off, drop_credits N, stats, stop"}
        return {"ok": True, "command": line.strip(), "t_ns": time.time_ns()}

    def _open_control(self, path: str) -> None:
        if os.path.exists(path):
            os.unlink(path)
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(path)
        server.listen(8)
        server.setblocking(False)
        self._control_server = server
        self._epoll.register(server.fileno(), select.EPOLLIN)

    def _accept_control(self) -> None:
        assert self._control_server is not None
        try:
            conn, _ = self._control_server.accept()
        except BlockingIOError:
            return
        conn.setblocking(False)
        self._control_conns[conn.fileno()] = (conn, bytearray())
        self._epoll.register(conn.fileno(), select.EPOLLIN)

    def _read_control(self, fd: int) -> None:
        conn, buf = self._control_conns[fd]
        try:
            data = conn.recv(4096)
        except BlockingIOError:
            return
        if not data:
            self._epoll.unregister(fd)
            del self._control_conns[fd]
            conn.close()
            return
        buf += data
        while b"\n" in buf:
            line, _, rest = bytes(buf).partition(b"\n")
            buf[:] = rest
            reply = self.command(line.decode(errors="replace"))
            try:
                conn.sendall(json.dumps(reply).encode() + b"\n")
            except OSError:
                pass

    def _read_stdin(self) -> None:
        try:
            data = os.read(sys.stdin.fileno(), 4096)
        except BlockingIOError:
            return
        if not data:
            self._epoll.unregister(sys.stdin.fileno())
            self._stdin = False
            return
        self._stdin_buf += data
        while b"\n" in self._stdin_buf:
            line, _, rest = bytes(self._stdin_buf).partition(b"\n")
            self._stdin_buf[:] = rest
            print(json.dumps(self.command(line.decode(errors="replace"))), flush=True)

    # ------------------------------------------------------------------ results

    def _check_done(self) -> None:
        if self._jobs_left == 0 and self._recvs_left == 0 and self.done_ns is None:
            self.done_ns = time.time_ns()
            if self.until_done:
                # Linger so that the last credits and resumes reach the peers.
                self._at(time.monotonic_ns() + 200e6, self.stop)

    def _socket_drops(self) -> int | None:
        drops = socket_drops(self.sock)  # the kernel resets the count on every read
        if drops is not None:
            self.socket_drops_total += drops
        return None if drops is None and not self.socket_drops_total else self.socket_drops_total

    def rate_check(self) -> tuple[bool, str, float]:
        """(rate kept, reason, shortfall): time lost to late sends over time spent sending."""
        sent = len(self.sent_ns) + self.rc_stats.acks_sent + self.rc_stats.naks_sent
        active_ns = sent * self.period_ns + self.slipped_ns
        shortfall = self.slipped_ns / active_ns if active_ns else 0.0
        if shortfall <= RATE_SHORTFALL_LIMIT:
            return True, "", shortfall
        return False, (f"fell behind its {self.cfg.rate_pps:g} pps schedule {self.slips} times, "
                       f"losing {self.slipped_ns / 1e6:.1f} ms of {active_ns / 1e6:.1f} ms "
                       f"sending ({shortfall:.1%} > {RATE_SHORTFALL_LIMIT:.0%}); worst send "
                       f"{self.max_late_ns / 1e3:.0f} us late, {self.tx_retries} ENOBUFS "
                       "retries"), shortfall

    def collectives(self) -> dict[str, dict]:
        """Per collective id: when this port sent its first frame and completed its part."""
        out: dict[int, dict] = {}

        def entry(coll_id: int) -> dict:
            return out.setdefault(coll_id, {"sends": 0, "sends_done": 0, "recvs": 0,
                                            "recvs_done": 0, "start_ns": None, "end_ns": 0})
        for job in self._jobs:
            s = job.spec
            if s.coll_id == 0 and s.chunks is None:
                continue
            d = entry(s.coll_id)
            d["sends"] += 1
            if job.first_ns is not None:
                d["start_ns"] = min(d["start_ns"] or job.first_ns, job.first_ns)
            if job.done_ns is not None and (not self.rc or job.acked_ns is not None):
                d["sends_done"] += 1
                d["end_ns"] = max(d["end_ns"], job.done_ns)
        for r in self.work.recvs:
            d = entry(r.coll_id)
            d["recvs"] += 1
            done = self._recv_done_ns.get((r.coll_id, r.step, r.slid))
            if done is not None:
                d["recvs_done"] += 1
                d["end_ns"] = max(d["end_ns"], done)
        pending = {s.coll_id for s in self.work.flows} - {j.spec.coll_id for j in self._jobs}
        for coll_id in pending:
            entry(coll_id)["sends"] += sum(1 for s in self.work.flows if s.coll_id == coll_id)
        for d in out.values():
            d["complete"] = d["sends_done"] == d["sends"] and d["recvs_done"] == d["recvs"]
            if not d["complete"]:
                d["end_ns"] = None
        return {str(k): v for k, v in sorted(out.items())}

    def summary(self) -> dict:
        kept, reason, shortfall = self.rate_check()
        sent = len(self.sent_ns)
        achieved = None
        if sent > 1 and self.last_tx_ns != self.first_tx_ns:
            achieved = (sent - 1) * 1e9 / (self.last_tx_ns - self.first_tx_ns)
        blocked = list(self.fc.blocked_ns)
        now = time.monotonic_ns()
        for vl, since in enumerate(self._blocked_since):
            if since is not None:
                blocked[vl] += now - since
        per_flow: dict[str, dict] = {}
        for job in self._jobs:
            d = per_flow.setdefault(str(job.spec.flow), {"sent": 0, "jobs": 0, "jobs_done": 0})
            d["sent"] += job.sent
            d["jobs"] += 1
            d["jobs_done"] += job.done_ns is not None
        fc = asdict(self.fc)
        fc["blocked_ns"] = blocked
        fc["blocked_ms_total"] = sum(blocked) / 1e6
        # classes with frames to send that the link did not let go when the run ended
        fc["blocked_at_end"] = [vl for vl, since in enumerate(self._blocked_since)
                                if since is not None]
        return {
            "schema": SUMMARY_SCHEMA, "name": self.cfg.name, "iface": self.cfg.iface,
            "mode": self.mode.value, "lid": self.cfg.lid, "mac": self.cfg.mac,
            "rate_pps": self.cfg.rate_pps, "frame_bytes": self.cfg.frame_bytes,
            "link_bps": self.cfg.rate_pps * 8 * self.cfg.frame_bytes,
            "pause_quantum_ns": self.quantum_ns,
            "buffer": self.cfg.buffer, "xoff": self.cfg.xoff, "xon": self.cfg.xon,
            "drain_pps": self.cfg.effective_drain_pps,
            "credit_coalesce": self.cfg.credit_coalesce,
            "start_ns": self.start_real, "clock": "CLOCK_REALTIME",
            "sent": sent, "achieved_pps": achieved, "rate_kept": kept, "rate_reason": reason,
            "rate_shortfall": shortfall, "max_lateness_us": self.max_late_ns / 1e3,
            "tx_retries": self.tx_retries, "flows": per_flow,
            "received": self.rx_data, "delivered": self.rx_delivered,
            "buffered": self._buffered, "not_for_me": self.rx_not_for_me,
            "rx_drops": dict(self.rx_drops), "rx_dropped": sum(self.rx_drops.values()),
            "socket_drops": self._socket_drops(),
            "late_start_ms": self.late_start_ns / 1e6,
            "peak_occupancy": max(self.peak_occupancy),
            "flow_control": fc, "stalled": self.stalled,
            "done": self.done_ns is not None, "done_ns": self.done_ns,
            "collectives": self.collectives(),
            "transport": self.cfg.transport, "rc": asdict(self.rc_stats),
            "rc_errors": list(self.rc_errors),
            "unacknowledged": sum(len(q) for q in self._inflight.values()),
            "rc_flows": {str(flow): {
                "oldest_psn": q[0][0], "unacknowledged": len(q),
                "since_progress_ms": round((now - self._progress_ns.get(flow, now)) / 1e6, 1),
                "timer_armed": flow in self._rto_entry,
                "retransmitting": flow in self._retx} for flow, q in self._inflight.items() if q},
            "window_waits": self._window_waits,
            "sa_changes": list(self.sa_changes), "sa_bad_frames": self.sa_bad_frames,
        }

    def write_logs(self, log_dir: Path | str) -> dict[str, Path]:
        log_dir = Path(log_dir)
        log_dir.mkdir(parents=True, exist_ok=True)
        name = self.cfg.name
        paths = {"sent": log_dir / f"{name}.sent.csv", "recv": log_dir / f"{name}.recv.csv",
                 "summary": log_dir / f"{name}.summary.json"}
        write_log_rows(paths["sent"], zip(self.sent_flow, self.sent_psn, self.sent_ns))
        tmp = paths["recv"].with_name(paths["recv"].name + ".tmp")
        with open(tmp, "w") as f:
            f.write(RECV_LOG_HEADER)
            f.writelines(",".join(map(str, row)) + "\n" for row in self.rx_log)
        os.replace(tmp, paths["recv"])
        summary = self.summary() | {"logs": {k: str(v) for k, v in paths.items()}}
        tmp = paths["summary"].with_name(paths["summary"].name + ".tmp")
        tmp.write_text(json.dumps(summary, indent=2) + "\n")
        os.replace(tmp, paths["summary"])
        return paths


RecvRecord = namedtuple("RecvRecord", "flow psn send_ns recv_ns slid coll_id step chunk admitted")


def read_recv_log(path: Path | str) -> Iterator[RecvRecord]:
    """The rows of a NIC's receive log (NAME.recv.csv), as ints."""
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            if line.startswith("#") or line.startswith("flow,"):
                continue
            try:
                yield RecvRecord(*map(int, line.split(",")))
            except (TypeError, ValueError):
                raise NicConfigError(f"{path}:{lineno}: expected {RECV_LOG_HEADER.split()[-1]!r}, "
                                     f"found {line.strip()!r}") from None


def open_nic_socket(iface: str, bufsize: int = 8 << 20) -> socket.socket:
    """AF_PACKET socket on iface that does not see its own transmissions (needs CAP_NET_RAW)."""
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))  # ETH_P_ALL
    try:
        sock.setsockopt(SOL_PACKET, PACKET_IGNORE_OUTGOING, 1)
        for opt, force in ((socket.SO_SNDBUF, 32), (socket.SO_RCVBUF, 33)):  # *BUFFORCE
            try:
                sock.setsockopt(socket.SOL_SOCKET, force, bufsize)
            except PermissionError:
                sock.setsockopt(socket.SOL_SOCKET, opt, bufsize)
        sock.bind((iface, 0))
    except OSError:
        sock.close()
        raise
    return sock


def socket_drops(sock: socket.socket) -> int | None:
    """Frames the kernel dropped for this packet socket (receive buffer full) since last read."""
    try:
        _packets, drops = struct.unpack("II", sock.getsockopt(SOL_PACKET, PACKET_STATISTICS, 8))
    except OSError:
        return None
    return drops


def iface_mac(iface: str) -> str:
    try:
        return Path(f"/sys/class/net/{iface}/address").read_text().strip()
    except OSError as exc:
        raise NicConfigError(f"no interface {iface!r} here ({exc.strerror})") from None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="traffic.nic", description=__doc__.splitlines()[0])
    ap.add_argument("--iface", required=True)
    ap.add_argument("--mode", required=True, choices=[m.value for m in FlowControl])
    ap.add_argument("--rate-pps", type=float, required=True, help="link rate, frames/s")
    ap.add_argument("--buffer", type=int, default=64, help="receive buffer per class, frames")
    ap.add_argument("--xoff", type=int, default=PFC_XOFF, help="PFC: pause at this occupancy")
    ap.add_argument("--xon", type=int, default=PFC_XON, help="PFC: resume at or below this")
    ap.add_argument("--drain-pps", type=float, default=None,
                    help="receive-buffer drain rate (default: --rate-pps; 0: no buffering)")
    ap.add_argument("--credit-coalesce", type=int, default=4)
    ap.add_argument("--credit-refresh-ms", type=float, default=5.0)
    ap.add_argument("--credit-request-ms", type=float, default=20.0)
    ap.add_argument("--frame-bytes", type=int, default=DEFAULT_FRAME_BYTES,
                    help="frame size that, with --rate-pps, gives the link's bits/s "
                         "(pause quanta)")
    ap.add_argument("--vls", default="0", help="classes to advertise credits for, e.g. 0,1")
    ap.add_argument("--storm-interval-ms", type=float, default=1.0)
    ap.add_argument("--transport", choices=TRANSPORTS, default=None,
                    help="ud: nobody acknowledges (default); rc: ACK/NAK and go-back-N "
                         "retransmission, as InfiniBand RC (default: FLOWS.json, else ud)")
    ap.add_argument("--rc-timeout-ms", type=float, default=100.0)
    ap.add_argument("--rc-retry-limit", type=int, default=7)
    ap.add_argument("--rc-ack-every", type=int, default=16)
    ap.add_argument("--rc-window", type=int, default=128)
    ap.add_argument("--flows", help="FLOWS.json (name, lid, flows, recvs, actions)")
    ap.add_argument("--log-dir", required=True)
    ap.add_argument("--duration", type=float, required=True, help="seconds from the start")
    ap.add_argument("--start-at", type=float, default=None,
                    help="CLOCK_REALTIME seconds at which flows' start_s = 0 (default: now)")
    ap.add_argument("--until-done", action="store_true",
                    help="stop once every flow is sent and every expected receive arrived")
    ap.add_argument("--control", help="unix socket path for control commands, or - for stdin")
    ap.add_argument("--rt-priority", type=int, default=10,
                    help="SCHED_FIFO priority (1-99) so that a loaded machine does not make "
                         "the NIC miss its deadlines; 0: normal scheduling")
    ap.add_argument("--name", help="log file prefix (default: FLOWS.json name or the iface)")
    ap.add_argument("--lid", type=int, default=None)
    ap.add_argument("--mac", default=None, help="source MAC (default: the interface's)")
    args = ap.parse_args(argv)
    try:
        port, workload = load_flows_file(args.flows) if args.flows else ({}, Workload())
        config = NicConfig(
            iface=args.iface, mode=FlowControl(args.mode), rate_pps=args.rate_pps,
            mac=args.mac or port.get("mac") or iface_mac(args.iface),
            name=args.name or port.get("name") or args.iface,
            lid=args.lid if args.lid is not None else port.get("lid"),
            buffer=args.buffer, xoff=args.xoff, xon=args.xon, drain_pps=args.drain_pps,
            credit_coalesce=args.credit_coalesce, credit_refresh_ms=args.credit_refresh_ms,
            credit_request_ms=args.credit_request_ms, frame_bytes=args.frame_bytes,
            vls=port.get("vls") or tuple(int(v) for v in args.vls.split(",")),
            sl_to_vl=port.get("sl_to_vl", tuple(range(16))),
            storm_interval_ms=args.storm_interval_ms,
            transport=args.transport or port.get("transport", "ud"),
            rc_timeout_ms=args.rc_timeout_ms, rc_retry_limit=args.rc_retry_limit,
            rc_ack_every=args.rc_ack_every, rc_window=args.rc_window,
            sl_of_lid=port.get("sl_of_lid", ()))
        nic = Nic(config, workload, control_path=None if args.control in (None, "-")
                  else args.control, control_stdin=args.control == "-")
    except (NicConfigError, OSError) as exc:
        print(f"traffic.nic: error: {exc}", file=sys.stderr)
        return 2
    nic.until_done = args.until_done
    if args.rt_priority:
        # SCHED_FIFO: a loaded machine then delays the NIC's deadlines by far less.
        # The loop never spins, so it cannot starve the machine.
        try:
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(args.rt_priority))
        except OSError as exc:
            print(f"traffic.nic: warning: no SCHED_FIFO ({exc.strerror}); timing may suffer",
                  file=sys.stderr)
    signal.signal(signal.SIGTERM, nic.stop_soon)
    signal.signal(signal.SIGINT, nic.stop_soon)
    print(json.dumps({"ready": True, "name": config.name, "pid": os.getpid()}), flush=True)
    try:
        nic.run(args.duration, None if args.start_at is None else int(args.start_at * 1e9))
        paths = nic.write_logs(args.log_dir)
    except OSError as exc:
        print(f"traffic.nic: error: {exc}", file=sys.stderr)
        return 1
    finally:
        nic.close()
    summary = json.loads(paths["summary"].read_text())
    print(json.dumps({k: summary[k] for k in ("name", "sent", "received", "rx_dropped",
                                              "rate_kept", "done")}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
