"""The NIC emulator's configuration: port options, the workload (FLOWS.json) and constants."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from traffic.addressing import AddressError, Lookup, names_in, resolve, wants_sa
from traffic.flow_control import (
    DEFAULT_FRAME_BYTES,
    PFC_XOFF,
    PFC_XON,
    FlowControl,
)
from traffic.vl_arbitration import VlArbitration, VlArbitrationError

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
RC_BACKOFF_MAX_SHIFT = 3  # the retransmission timeout grows to 8 x its base at most
RC_RTO_MODES = ("adaptive", "fixed")  # traffic/rc_rto.py
# A timeout while the flow's own class is paused (PFC) or out of credit: "defer" waits for
# the link (no go-back, no retry counted, the timer restarts); "retransmit" goes back
# anyway, as an RNIC whose transport timer ignores link-level flow control does.
RC_PAUSED_TIMEOUTS = ("defer", "retransmit")
# What a timeout resends: "probe" the oldest frame only (then the rest once it is
# acknowledged), "window" every unacknowledged frame (InfiniBand's go-back-N).
RC_TIMEOUT_RESENDS = ("probe", "window")
# What a NAK resends: the window from the NAKed PSN (InfiniBand RC), or only the hole
# the receiver names, the frames past it being kept (selective repeat, nic_rc.py).
RC_RETRANSMISSIONS = ("go-back-n", "selective")
# The window: following the round trip (a delay target, rc_window.py) or rc_window always.
RC_WINDOW_CONTROLS = ("delay", "fixed")


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
    # (the initial timeout; "adaptive" then follows the measured round trip, rc_rto.py)
    rc_rto: str = "adaptive"  # or "fixed": always rc_timeout_ms (with the backoff)
    rc_rto_min_ms: float = 10.0  # adaptive: the floor ...
    rc_rto_max_ms: float = 800.0  # ... and the ceiling, before the backoff
    rc_paused_timeouts: str = "defer"  # see RC_PAUSED_TIMEOUTS
    rc_timeout_resend: str = "probe"  # see RC_TIMEOUT_RESENDS
    rc_retransmission: str = "go-back-n"  # see RC_RETRANSMISSIONS
    rc_retry_limit: int = 7  # timeouts in a row without progress: the flow fails (IB retry_cnt)
    rc_ack_every: int = 16  # frames received in order per ACK ...
    rc_ack_delay_ms: float = 20.0  # ... or this long after the flow's first unacked one
    rc_window: int = 128  # unacknowledged frames per flow at most (bounds a go-back)
    rc_window_control: str = "fixed"  # see RC_WINDOW_CONTROLS
    sl_of_lid: tuple[tuple[int, int], ...] = ()  # the SL of paths to a LID (ACKs use it)
    vl_arbitration: VlArbitration | None = None  # None: classes round-robin, frame by frame

    def __post_init__(self) -> None:
        if self.transport not in TRANSPORTS:
            raise NicConfigError(f"--transport must be one of {', '.join(TRANSPORTS)}, "
                                 f"got {self.transport!r}")
        if self.rc_timeout_ms <= 0 or self.rc_retry_limit < 1 or self.rc_ack_every < 1 \
                or self.rc_window < self.rc_ack_every:
            raise NicConfigError("RC needs --rc-timeout-ms > 0, --rc-retry-limit >= 1, "
                                 "--rc-ack-every >= 1 and --rc-window >= --rc-ack-every")
        if self.rc_rto not in RC_RTO_MODES:
            raise NicConfigError(f"--rc-rto must be one of {', '.join(RC_RTO_MODES)}, "
                                 f"got {self.rc_rto!r}")
        if not 0 < self.rc_rto_min_ms <= self.rc_rto_max_ms:
            raise NicConfigError(f"RC needs 0 < --rc-rto-min-ms <= --rc-rto-max-ms, got "
                                 f"{self.rc_rto_min_ms} and {self.rc_rto_max_ms}")
        if self.rc_timeout_resend not in RC_TIMEOUT_RESENDS:
            raise NicConfigError(f"--rc-timeout-resend must be one of "
                                 f"{', '.join(RC_TIMEOUT_RESENDS)}, got "
                                 f"{self.rc_timeout_resend!r}")
        if self.rc_retransmission not in RC_RETRANSMISSIONS:
            raise NicConfigError(f"--rc-retransmission must be one of "
                                 f"{', '.join(RC_RETRANSMISSIONS)}, got "
                                 f"{self.rc_retransmission!r}")
        if self.rc_window_control not in RC_WINDOW_CONTROLS:
            raise NicConfigError(f"--rc-window-control must be one of "
                                 f"{', '.join(RC_WINDOW_CONTROLS)}, got "
                                 f"{self.rc_window_control!r}")
        if self.rc_paused_timeouts not in RC_PAUSED_TIMEOUTS:
            raise NicConfigError(f"--rc-paused-timeouts must be one of "
                                 f"{', '.join(RC_PAUSED_TIMEOUTS)}, got "
                                 f"{self.rc_paused_timeouts!r}")
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
    compute_s: float = 0.0  # then wait this long more: the rank's compute before sending
    pkey: int = 0xFFFF  # P_Key in the BTH (bit 15: full member); default partition

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


def load_flows_file(path: Path | str, lookup: Lookup | None = None, name: str | None = None
                    ) -> tuple[dict, Workload]:
    """(port settings from the file: name, lid, mac, vls, sl_to_vl, vl_arbitration;
    the workload). A file written for the SA (traffic/addressing.py) names hosts; its
    addresses come from `lookup` (the SA, traffic.addressing.sa_lookup), asked once
    here: the answers are in port["addresses"]."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise NicConfigError(f"{path}: {exc}") from None
    learned = None
    if wants_sa(data):
        own = name or data.get("name")
        if lookup is None or not own:
            raise NicConfigError(f"{path}: the file names hosts (addresses from the SA) but "
                                 "this NIC has no SA to ask or no name")
        try:
            lid, peers = lookup(own, names_in(data))
            data = resolve(data, lid, peers)
        except AddressError as exc:
            raise NicConfigError(str(exc)) from None
        learned = {"lid": lid, "peers": {p.name: {"lid": p.lid, "sl": p.sl, "mac": p.mac}
                                         for p in peers.values()}}
    port = {k: data[k] for k in ("name", "lid", "mac", "vls", "sl_to_vl", "transport")
            if k in data}
    if learned is not None:
        port["addresses"] = learned
    try:
        port["sl_of_lid"] = tuple((int(lid), int(sl))
                                  for lid, sl in data.get("sl_of_lid", {}).items())
    except (AttributeError, TypeError, ValueError):
        raise NicConfigError(f"{path}: sl_of_lid must map LIDs to SLs, got "
                             f"{data.get('sl_of_lid')!r}") from None
    if data.get("vl_arbitration") is not None:
        try:
            port["vl_arbitration"] = VlArbitration.from_dict(data["vl_arbitration"])
        except VlArbitrationError as exc:
            raise NicConfigError(f"{path}: vl_arbitration: {exc}") from None
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


