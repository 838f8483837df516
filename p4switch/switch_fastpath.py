"""The embedded switch's fast per-packet paths: the fused program function wrapped
with the v1model packet flow for the common case, and the batch path used by the
data-plane thread."""

from __future__ import annotations

from collections.abc import Callable

from p4switch import program_common as P
from p4switch.program import Program

RX_BATCH = 64  # frames read from one port per wakeup


class FastPaths:
    """Mixin of Switch (p4switch/switch.py)."""

    def _fast_path(self, prog: Program) -> Callable[[bytes, int, float], None]:
        """The per-packet function of the data-plane thread for `prog`.

        Same semantics as _new_packet + _ingress + traffic manager + _egress, with
        everything bound to locals, and the common case (no clone, digest, resubmit,
        multicast or recirculation; egress port idle, unlimited and up; no pcap or
        trace) going straight from ingress to egress to the socket. Anything else
        takes the general path.
        """
        tm = self.tm
        general = not (tm.nprio == 1 and self._trace is None and not self._pcap_out)
        send_out = self._port_sender()
        if prog.fused is not None and not general:
            return self._fused_rx(prog, send_out)
        return self._program_rx(prog, general, send_out)

    def _port_sender(self) -> Callable:
        """send_out(port queue, port, frame): through the port's socket, or the general
        send where it has none; a failed send counts as the port's tx_error."""
        send_general = self._send

        def send_out(pq, spec: int, out: bytes) -> None:
            send = pq.send
            if send is None:
                if not send_general(spec, out):
                    pq.drops.tx_error += 1
                return
            try:
                send(out)
            except OSError:
                pq.drops.tx_error += 1
        return send_out

    def _fused_rx(self, prog: Program, send_out: Callable) -> Callable:
        """The per-packet function around the fused program function: it returns the
        frame and its port queue in the common case, else where the packet goes on
        (1: after ingress, 2: the traffic manager, 3: after egress)."""
        fused = prog.fused
        s_espec, s_eport = prog.std["egress_spec"], prog.std["egress_port"]
        tm_ports = self.tm.ports
        enqueue = self.tm.enqueue
        error = self._pipeline_error
        after_ingress = self._after_ingress
        after_egress = self._after_egress

        def rx_fused(frame: bytes, port: int, now: float, now_us: int) -> None:
            try:
                r = fused(frame, port, now_us, tm_ports)
            except Exception as e:  # noqa: BLE001
                error(e)
                return
            if r is not None:
                finish(r, now)

        def finish(r: tuple, now: float) -> None:
            """What comes after the fused function: send, or the general path."""
            pq, x = r
            if pq.__class__ is not int:
                send = pq.send
                if send is None:
                    send_out(pq, pq.port, x)
                    return
                try:
                    send(x)
                except OSError:
                    pq.drops.tx_error += 1
                return
            if pq == 1:
                after_ingress(prog, x, now)
            elif pq == 2:
                enqueue(x[s_espec], x, now)
            else:
                spec = x[s_eport]
                out = after_egress(prog, x, now)
                if out is not None:
                    send_out(tm_ports[spec], spec, out)

        rx_fused.fused, rx_fused.finish = fused, finish
        return rx_fused

    def _program_rx(self, prog: Program, general: bool, send_out: Callable) -> Callable:
        """The per-packet function over the program's own parse, ingress, egress and
        deparse functions (`general`: every packet through the general path)."""
        tpl_copy = prog.template.copy
        parse, ingress, egress, deparse = prog.parse, prog.ingress, prog.egress, prog.deparse
        std = prog.std
        s_inport, s_plen, s_igts = std["ingress_port"], std["packet_length"], \
            std["ingress_global_timestamp"]
        s_espec, s_eport, s_itype, s_mcast = std["egress_spec"], std["egress_port"], \
            std["instance_type"], std["mcast_grp"]
        s_prio = std["priority"]
        s_len = prog.len_reg
        s_enq_ts, s_enq_qd, s_deq_td, s_deq_qd, s_eg_ts = (
            std["enq_timestamp"], std["enq_qdepth"], std["deq_timedelta"], std["deq_qdepth"],
            std["egress_global_timestamp"])
        SPECIAL = P.SPECIAL
        DROP = P.DROP_PORT
        tm_ports = self.tm.ports
        enqueue = self.tm.enqueue
        error = self._pipeline_error
        ingress_tail = self._ingress
        after_ingress = self._after_ingress
        after_egress = self._after_egress

        def rx(frame: bytes, port: int, now: float, now_us: int) -> None:
            S = tpl_copy()
            S[0] = frame
            S[s_inport] = port
            S[s_plen] = S[s_len] = len(frame)
            S[s_igts] = now_us
            if general:
                ingress_tail(prog, S, now)
                return
            try:
                parse(S, frame)
                ingress(S)
            except Exception as e:  # noqa: BLE001
                error(e)
                return
            if S[SPECIAL] or S[s_mcast]:
                after_ingress(prog, S, now)
                return
            spec = S[s_espec]
            if spec == DROP:
                return
            S[s_itype] = 0
            pq = tm_ports.get(spec)
            if pq is None or not pq.fast or pq.scheduled or S[s_prio]:
                enqueue(spec, S, now)  # (a priority: the TM checks it against its queues)
                return
            # An idle port at unlimited rate: through its empty queue at once.
            S[s_enq_ts] = S[s_eg_ts] = now_us
            S[s_enq_qd] = S[s_deq_qd] = S[s_deq_td] = 0
            S[s_eport] = spec
            S[s_espec] = DROP + 1
            S[s_plen] = S[s_len]
            try:
                egress(S)
                if S[SPECIAL] or S[s_espec] == DROP:
                    out = after_egress(prog, S, now)
                    if out is None:
                        return
                else:
                    out = deparse(S)
            except Exception as e:  # noqa: BLE001
                error(e)
                return
            send_out(pq, spec, out)

        return rx

    def _batch_path(self, prog: Program | None) -> Callable:
        """batch(recv, bufsize, port, now, now_us, pcap): up to RX_BATCH frames
        from one port's socket through the fast path, the fused function called
        here directly (one Python call per batch, not per frame, of glue). Called
        with the switch lock held once; a waiting control-plane write
        (Switch._control) takes it between two frames."""
        rx = self._fast_path(prog) if prog is not None else None
        fast = getattr(rx, "fused", None) is not None
        finish = getattr(rx, "finish", None)
        tm_ports = self.tm.ports
        error = self._pipeline_error
        control_pending = self._control_pending
        yield_to_control = self._yield_to_control

        def batch(recv, bufsize: int, port: int, now: float, now_us: int, pc) -> None:
            # The program's fused function of the moment: a control-plane write may
            # swap it (configuration tables baked in or not, p4switch/specialisation.py),
            # always with the switch lock, so between two frames.
            fused = prog.fused if fast else None
            for _ in range(RX_BATCH):
                if control_pending[0]:  # a control-plane write goes at this frame boundary
                    yield_to_control()
                    if fast:
                        fused = prog.fused
                try:
                    frame = recv(bufsize)
                except OSError:  # EAGAIN; or the interface went down
                    return
                if pc is not None:
                    pc.write(frame)
                if fused is None:
                    if rx is not None:
                        rx(frame, port, now, now_us)
                    continue
                try:
                    r = fused(frame, port, now_us, tm_ports)
                except Exception as e:  # noqa: BLE001 - a packet must never kill the switch
                    error(e)
                    continue
                if r is not None:  # None: sent (or dropped) by the fused function
                    finish(r, now)
        return batch
