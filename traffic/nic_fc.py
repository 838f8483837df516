"""The NIC's link-level flow control: PFC pause/resume, credit frames, pause storms."""

from __future__ import annotations

import errno
import time
from dataclasses import dataclass, field

from traffic.flow_control import (
    FlowControl,
)
from traffic.frames import (
    CREDIT_CODEC,
    ETHERTYPE_FABRIC,
    ETHERTYPE_MAC_CONTROL,
    FC_FRAME_BYTES,
    PFC_CODEC,
    PFC_OPCODE,
    PFC_PAUSE_QUANTA,
    CreditOp,
    Kind,
)
from traffic.nic_config import (
    CREDIT_MOD,
    CREDIT_WINDOW,
    NUM_CLASSES,
)
from traffic.nic_socket import link_down_error


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



class LinkFlowControl:
    """Mixin of Nic: sending and receiving PFC and CREDIT frames."""

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

    def _send_fc(self, frame: bytes) -> bool:
        for _ in range(100):
            try:
                self._send(frame)
                return True
            except OSError as exc:
                if link_down_error(exc):
                    self.tx_link_down += 1
                    return True
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
        self._credit_vls.add(vl)
        if c.op == CreditOp.REQUEST:
            # A request travels among the peer's data (tc keeps it in the data class), so
            # its FCTBS counts every DATA frame sent before it: ABR resyncs to it. An
            # update's FCTBS is not trusted: it may have overtaken data still in the
            # peer's qdisc (topologies/link_rates.py), and ABR would count that twice.
            self.abr[vl] = c.fctbs
            if not self.stalled:
                self._send_credit(vl)
        self._kick_tx()

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

