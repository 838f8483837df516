"""The embedded switch: v1model packet flow around a compiled program.

Packet flow (simple_switch's): parser -> ingress -> [I2E clone, digest,
resubmit, multicast, drop] -> traffic manager -> egress -> [E2E clone, drop]
-> deparser -> [recirculate] -> port, or the packet-in handler for the CPU
port. `process()` runs that flow synchronously with no queue timing (for unit
and STF tests); `start()` runs it on one data-plane thread that sleeps in
epoll over the ports' raw sockets and the traffic manager's timers.
"""

from __future__ import annotations

import gc
import os
import queue
import select
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from p4switch import program_common as P
from p4switch.control_priority import normal_scheduling
from p4switch.ports import (
    DeadlineTimer,
    LinkMonitor,
    PcapWriter,
    PortError,
    carrier,
    frame_buffer_size,
    open_port,
)
from p4switch.program import Program, ProgramError
from p4switch.runtime_api import DataplaneError, Replica
from p4switch.specialisation import Specialisation
from p4switch.switch_api import DataplaneApi
from p4switch.switch_fastpath import FastPaths
from p4switch.traffic_manager import TrafficManager

__all__ = ["Switch", "ProgramError", "PortError", "DataplaneError"]

CARRIER_POLL_S = 0.1
MAX_SYNC_PASSES = 16  # process(): resubmit/recirculate passes before a packet is dropped
# The longest the packet loop stands aside for one control-plane write (a safety net: the
# writer normally signals it is done within microseconds of getting the lock).
CONTROL_YIELD_MAX_S = 0.005


class Switch(FastPaths, DataplaneApi):
    """One switch instance implementing runtime_api.Dataplane."""

    def __init__(self, ports: dict[int, str], cpu_port: int | None = None, device_id: int = 0,
                 log_console: bool = False, pcap_dir: str | None = None,
                 priority_queues: int = 1, log_file: str | None = None,
                 recirc_interval_us: float = 50.0, recirc_idle_max_us: float = 1000.0):
        self.ports = dict(ports)
        self.cpu_port = cpu_port
        self.device_id = device_id
        self.priority_queues = priority_queues
        self.pcap_dir = pcap_dir
        self.t0 = time.monotonic()
        self.tm = TrafficManager(priority_queues, recirc_interval_us, recirc_idle_max_us,
                                 self.t0)
        self.tm.egress = self._egress_tm
        self.tm.send = self._send
        self.tm.reinject = self._reinject_recirc
        self.program: Program | None = None
        self.mc_groups: dict[int, list[Replica]] = {}
        self.clone_sessions: dict[int, tuple[list[Replica], int, int]] = {}
        self.pipeline_errors = 0
        # ports whose cable loses frames (port_set_params(loss=)): [fraction, accumulator]
        self._wire_loss: dict[int, list[float]] = {}
        self.wire_lost: dict[int, int] = {}  # frames those cables lost, per port
        self._packet_in: Callable[[bytes], None] | None = None
        self._digest: Callable[[str, tuple[int, ...]], None] | None = None
        self._port_status: Callable[[int, bool], None] | None = None
        self._port_events: queue.SimpleQueue | None = None
        self._lock = threading.RLock()
        # Control-plane writers waiting for the lock (_control): the packet loop reads the
        # cell between frames and stands aside until _control_idle is set again.
        self._control_pending = [0]
        self._control_mutex = threading.Lock()
        self._control_idle = threading.Event()
        self._control_idle.set()
        self.tm.control_pending = self._control_pending
        self.tm.yield_to_control = self._yield_to_control
        self._frames_at = 0.0  # when the data plane last had a frame (monotonic)
        self.specialisation = Specialisation(self._install_fused, self._note, self._idle_for)
        self._log_out = None
        if log_file:
            self._log_out = open(log_file, "a", buffering=1)
        elif log_console:
            self._log_out = sys.stderr
        self._trace = self._log if self._log_out is not None else None
        self._pkt_id = -1  # for the log lines: the first packet is 0, as in bmv2
        self._socks: dict[int, object] = {}
        self._pcap_in: dict[int, PcapWriter] = {}
        self._pcap_out: dict[int, PcapWriter] = {}
        self._port_up: dict[int, bool] = {p: True for p in self.ports}
        self._thread: threading.Thread | None = None
        self._running = False
        self._inject: deque = deque()
        self._wake_fd: int | None = None
        self._sync_out: list | None = None
        self._resubmits: deque = deque()

    # ---------------------------------------------------------------- logging
    def _log(self, msg: str) -> None:
        """One bmv2-style line: `[time] [bmv2] [D] [thread T] [P.0] [cxt 0] msg`,
        P the number of the packet being processed (bmv2's packet id; the copy id
        is always 0 here)."""
        out = self._log_out
        if out is not None:
            now = time.time()
            ts = time.strftime("%H:%M:%S", time.localtime(now))
            out.write(f"[{ts}.{int(now * 1000) % 1000:03d}] [bmv2] [D] "
                      f"[thread {threading.get_native_id()}] [{self._pkt_id}.0] "
                      f"[cxt 0] {msg}\n")

    # ----------------------------------------------------------- control plane
    @contextmanager
    def _control(self) -> Iterator[None]:
        """The switch lock for a control-plane change, taken at the next frame boundary.

        A plain acquire would wait for the data-plane thread to finish a whole epoll
        round (up to RX_BATCH frames per ready port, then the due timers), and Python's
        locks are not fair, so it could lose the race for several rounds. Announcing the
        writer first makes the packet loop release the lock after its current frame and
        wait (CONTROL_YIELD_MAX_S at most) until no writer is left."""
        with self._control_mutex:
            self._control_pending[0] += 1
            self._control_idle.clear()
        try:
            with self._lock:
                yield
        finally:
            with self._control_mutex:
                self._control_pending[0] -= 1
                if not self._control_pending[0]:
                    self._control_idle.set()

    def _yield_to_control(self) -> None:
        """On the data-plane thread, between two frames, with the lock held once: let
        the waiting control-plane writers in."""
        self._lock.release()
        try:
            self._control_idle.wait(CONTROL_YIELD_MAX_S)
        finally:
            self._lock.acquire()

    def _idle_for(self) -> float:
        """Seconds since the data plane last had a frame; 0 while it holds any."""
        if self.tm.next_deadline() is not None:
            return 0.0
        return time.monotonic() - self._frames_at

    def _note(self, msg: str) -> None:
        """One line about the switch itself (not a packet): the log, else stderr."""
        if self._log_out is not None:
            self._log(msg)
        else:
            print(f"p4switch: {msg}", file=sys.stderr)

    # ---------------------------------------------------------------- program
    def _install_fused(self, prog: Program, fused: Callable, source: str, baked: dict) -> bool:
        """Make `fused` (configuration tables `baked` as constants) the running fast
        path, between two frames; False if the program or a baked default entry
        changed since it was generated."""
        with self._control():
            if self.program is not prog or any(prog.tables[t].default is not e
                                               for t, e in baked.items()):
                return False
            prog.fused, prog.baked = fused, baked
            prog.specialised_source = source
            if self._running:
                gc.freeze()  # the new function is long-lived (see _long_lived)
            return True

    def specialise_now(self, tables: list[str] | None = None) -> bool:
        """Bake the default entries of `tables` (default: every configuration table)
        into the fast path now, synchronously (p4switch/specialisation.py); False if
        nothing was installed (no program, nothing to bake, or a write came first)."""
        prog = self.program
        if prog is None:
            return False
        return self.specialisation.bake(
            prog, prog.configuration_tables() if tables is None else tables)

    def load_program(self, bmv2_json: dict) -> None:
        with normal_scheduling():  # a real-time gRPC thread must not hold a core for this
            prog = Program(bmv2_json, trace=self._trace, clock_us=self._now_us)
        with self._control():
            self.tm.flush()
            self._resubmits.clear()
            self.program = prog
            self.specialisation.program_loaded(prog)
            self.tm.set_layout(prog.std)
            self.mc_groups.clear()
            self.clone_sessions.clear()
            s = prog.std
            self._s_inport = s["ingress_port"]
            self._s_plen = s["packet_length"]
            self._s_itype = s["instance_type"]
            self._s_igts = s["ingress_global_timestamp"]
            self._s_espec = s["egress_spec"]
            self._s_eport = s["egress_port"]
            self._s_mcast = s["mcast_grp"]
            self._s_rid = s["egress_rid"]
            self._s_prio = s["priority"]

    def _long_lived(self) -> None:
        """What the switch holds now (the program, its generated code) lives as long
        as it runs: out of the collector's full collections, which walked it all for
        20-40 ms with no frame moving (enough to overrun PFC headroom). Collected once
        first, at start (not at a program load: a collection there delayed
        SetForwardingPipelineConfig past its deadline on a fattree:4 bring-up)."""
        gc.collect()
        gc.freeze()

    def _prog(self) -> Program:
        if self.program is None:
            raise DataplaneError("no program loaded")
        return self.program

    def _now_us(self) -> float:
        return (time.monotonic() - self.t0) * 1e6

    # ------------------------------------------------------------- packet flow
    def _new_packet(self, prog: Program, frame: bytes, port: int, now: float) -> list:
        S = prog.template.copy()
        S[0] = frame
        S[self._s_inport] = port
        S[self._s_plen] = S[prog.len_reg] = len(frame)
        S[self._s_igts] = int((now - self.t0) * 1e6)
        return S

    def _child(self, prog: Program, parent: list, frame: bytes, itype: int, fl: int) -> list:
        """A new packet instance (resubmit, recirculate) keeping the field list `fl` of its
        parent's metadata; the rest is reset, as bmv2 does: ingress_port and
        ingress_global_timestamp are 0 unless the field list keeps them."""
        S = prog.template.copy()
        S[0] = frame
        S[self._s_plen] = S[prog.len_reg] = len(frame)
        for k in prog.field_lists.get(fl, ()):
            S[k] = parent[k]
        S[self._s_itype] = itype
        return S

    def _ingress(self, prog: Program, S: list, now: float) -> None:
        """Parser + ingress + what v1model does at the end of ingress."""
        frame = S[0]
        trace = self._trace
        if trace:
            self._pkt_id += 1
            trace(f"Processing packet received on port {S[self._s_inport]}")
            trace("Parser 'parser': start")
        try:
            prog.parse(S, frame)
            if trace:
                trace(f"Bytes parsed: {S[P.PAYLOAD]}")
                trace("Parser 'parser': end")
                trace("Pipeline 'ingress': start")
            prog.ingress(S)
        except Exception as e:  # noqa: BLE001 - a packet must never kill the switch
            self._pipeline_error(e)
            return
        if trace:
            trace("Pipeline 'ingress': end")
        self._after_ingress(prog, S, now)

    def _after_ingress(self, prog: Program, S: list, now: float) -> None:
        trace = self._trace
        frame = S[0]
        if S[P.CLONE] >= 0:
            self._clone_i2e(prog, S, now)
        if S[P.DIGESTS]:
            self._digests(prog, S)
        if S[P.RESUBMIT]:
            child = self._child(prog, S, frame, P.INSTANCE_RESUBMIT, S[P.RESUBMIT] - 1)
            self._resubmits.append(child)
            return
        S[P.SPECIAL] = 0
        mg = S[self._s_mcast]
        if mg:
            S[self._s_itype] = P.INSTANCE_REPLICATION
            self._multicast(S, mg, now)
            return
        spec = S[self._s_espec]
        if spec == P.DROP_PORT:
            if trace:
                trace("Dropping packet at the end of ingress")
            return
        S[self._s_itype] = P.INSTANCE_NORMAL
        if trace:
            trace(f"Egress port is {spec}")
        self.tm.enqueue(spec, S, now)

    def _multicast(self, S: list, mg: int, now: float) -> None:
        replicas = self.mc_groups.get(mg)
        if not replicas:
            return
        for r in replicas:
            c = S.copy()
            c[self._s_rid] = r.rid
            self.tm.enqueue(r.egress_port, c, now)

    def _clone_i2e(self, prog: Program, S: list, now: float) -> None:
        sid, fl = S[P.CLONE], S[P.CLONE_FL]
        S[P.CLONE] = -1
        session = self.clone_sessions.get(sid & P.CLONE_SESSION_MASK)
        if session is None:
            return
        replicas, cos, trunc = session
        # bmv2 re-parses the original frame for an ingress clone, then resets all of
        # its metadata (also what the parser set, ingress_port, the timestamps) before
        # copying the field list; packet_length it restores in egress.
        parsed = self._new_packet(prog, S[0], S[self._s_inport], now)
        try:
            prog.parse(parsed, S[0])
        except Exception as e:  # noqa: BLE001
            self._pipeline_error(e)
            return
        c = prog.template.copy()
        for k in prog.header_slots:
            c[k] = parsed[k]
        c[self._s_plen] = c[prog.len_reg] = parsed[prog.len_reg]
        for k in prog.field_lists.get(fl, ()):
            c[k] = S[k]
        c[self._s_itype] = P.INSTANCE_INGRESS_CLONE
        self._send_clone(c, replicas, cos, trunc, now)

    def _send_clone(self, c: list, replicas: list[Replica], cos: int, trunc: int,
                    now: float) -> None:
        if trunc:
            c[P.TRUNC] = trunc + 1
        if cos:
            c[self._s_prio] = cos
        for i, r in enumerate(replicas):
            x = c if i == len(replicas) - 1 else c.copy()
            x[self._s_rid] = r.rid
            self.tm.enqueue(r.egress_port, x, now)

    def _digests(self, prog: Program, S: list) -> None:
        ids = S[P.DIGESTS]
        S[P.DIGESTS] = None
        if self._digest is None:
            return
        for lid in ids:
            d = prog.digest_values(lid, S)
            if d is not None:
                try:
                    self._digest(*d)
                except Exception as e:  # noqa: BLE001
                    self._log(f"digest handler failed: {e}")

    def _egress(self, prog: Program, port: int, S: list, now: float) -> bytes | None:
        """Egress + deparser; returns the frame to transmit, or None."""
        S[self._s_eport] = port
        S[self._s_espec] = P.DROP_PORT + 1
        S[self._s_plen] = S[prog.len_reg]
        trace = self._trace
        if trace:
            trace("Pipeline 'egress': start")
        try:
            prog.egress(S)
        except Exception as e:  # noqa: BLE001
            self._pipeline_error(e)
            return None
        if trace:
            trace("Pipeline 'egress': end")
        return self._after_egress(prog, S, now)

    def _after_egress(self, prog: Program, S: list, now: float) -> bytes | None:
        trace = self._trace
        try:
            if S[P.CLONE] >= 0:
                self._clone_e2e(prog, S, now)
            if S[self._s_espec] == P.DROP_PORT:
                if trace:
                    trace("Dropping packet at the end of egress")
                return None
            if S[P.RECIRC]:
                # bmv2 truncates a packet when it is transmitted: the recirculated
                # packet is the whole deparsed one, and its new pass forgets the length
                S[P.TRUNC] = 0
            if trace:
                trace("Deparser 'deparser': start")
            frame = prog.deparse(S)
            if trace:
                trace("Deparser 'deparser': end")
        except Exception as e:  # noqa: BLE001
            self._pipeline_error(e)
            return None
        if S[P.RECIRC]:
            child = self._child(prog, S, frame, P.INSTANCE_RECIRC, S[P.RECIRC] - 1)
            if trace:
                trace("Recirculating packet")
            if self._sync_out is not None:
                self._resubmits.append(child)
            else:
                self.tm.recirculate(child, now)
            return None
        return frame

    def _clone_e2e(self, prog: Program, S: list, now: float) -> None:
        sid, fl = S[P.CLONE], S[P.CLONE_FL]
        S[P.CLONE] = -1
        session = self.clone_sessions.get(sid & P.CLONE_SESSION_MASK)
        if session is None:
            return
        c = prog.template.copy()
        for k in prog.header_slots:
            c[k] = S[k]
        for k in prog.field_lists.get(fl, ()):
            c[k] = S[k]
        c[prog.len_reg] = S[prog.len_reg]  # metadata is reset (ingress_port too), as bmv2
        c[self._s_itype] = P.INSTANCE_EGRESS_CLONE
        replicas, cos, trunc = session
        self._send_clone(c, replicas, cos, trunc, now)

    def _pipeline_error(self, e: Exception) -> None:
        self.pipeline_errors += 1
        if self._log_out is not None or self.pipeline_errors <= 10:
            msg = f"packet dropped: {type(e).__name__}: {e}"
            if self._log_out is not None:
                self._log(msg)
            else:
                print(f"p4switch: {msg}", file=sys.stderr)

    # The traffic manager calls these.
    def _egress_tm(self, port: int, S: list) -> bytes | None:
        prog = self.program
        if prog is None:
            return None
        return self._egress(prog, port, S, time.monotonic())

    def _send(self, port: int, frame: bytes) -> bool:
        if self._trace:
            self._trace(f"Transmitting packet of size {len(frame)} out of port {port}")
        if self._sync_out is not None:
            self._sync_out.append((port, frame))
            if port == self.cpu_port and self._packet_in is not None:
                self._packet_in(frame)
            return True
        if port == self.cpu_port:
            if self._packet_in is not None:
                try:
                    self._packet_in(frame)
                except Exception as e:  # noqa: BLE001
                    self._log(f"packet-in handler failed: {e}")
            return True
        sock = self._socks.get(port)
        if sock is None or not self._port_up.get(port, False):
            return False
        loss = self._wire_loss.get(port)
        if loss is not None:
            # a lossy cable: every 1/fraction-th frame leaves the port and never arrives
            loss[1] += loss[0]
            if loss[1] >= 1.0:
                loss[1] -= 1.0
                self.wire_lost[port] = self.wire_lost.get(port, 0) + 1
                return True
        try:
            sock.send(frame)
        except OSError:
            return False
        pc = self._pcap_out.get(port)
        if pc is not None:
            pc.write(frame)
        return True

    def _reinject_recirc(self, S: list) -> None:
        prog = self.program
        if prog is not None and len(S) == prog.nslots:
            now = time.monotonic()
            # Each pass is a new ingress: programs that hold packets by
            # recirculation read the current time here.
            S[self._s_igts] = int((now - self.t0) * 1e6)
            self._ingress(prog, S, now)
            self._run_resubmits(prog, now)

    def _run_resubmits(self, prog: Program, now: float, limit: int = 1 << 30) -> None:
        n = 0
        now_us = int((now - self.t0) * 1e6)
        while self._resubmits and n < limit:
            S = self._resubmits.popleft()
            S[self._s_igts] = now_us
            self._ingress(prog, S, now)
            n += 1

    # ------------------------------------------------------------ sync entry
    def process(self, port: int, frame: bytes, fast: bool = False) -> list[tuple[int, bytes]]:
        """Run one frame through the whole switch at once; return (port, frame) outputs.

        Queues are served immediately (the configured rates and delays are ignored);
        resubmitted and recirculated packets are processed at once, at most
        MAX_SYNC_PASSES extra passes per call. CPU-port frames are returned too
        (and given to the packet-in handler). `fast`: through the data-plane thread's
        per-packet function (the fused fast path where the program has one) instead
        of the general path: both must give the same outputs.
        """
        with self._control():
            prog = self._prog()
            out: list[tuple[int, bytes]] = []
            self._sync_out = out
            if fast:  # every port exists, as on the data-plane thread
                for p in (*self.ports, *([self.cpu_port] if self.cpu_port is not None else [])):
                    self.tm.port(p)
            saved = {p: (pq.unlimited, pq.delay_s, pq.fast) for p, pq in self.tm.ports.items()}
            for pq in self.tm.ports.values():
                pq.unlimited, pq.delay_s, pq.fast = True, 0.0, pq.up if fast else pq.fast
            try:
                now = time.monotonic()
                if fast:
                    self._fast_path(prog)(frame, port, now, int((now - self.t0) * 1e6))
                else:
                    self._ingress(prog, self._new_packet(prog, frame, port, now), now)
                self._run_resubmits(prog, now, MAX_SYNC_PASSES)
                self._resubmits.clear()
            finally:
                for p, (u, d, f) in saved.items():
                    pq = self.tm.ports[p]
                    pq.unlimited, pq.delay_s, pq.fast = u, d, f
                self._sync_out = None
            return out

    # ------------------------------------------------------------- controller I/O
    def packet_out(self, frame: bytes) -> None:
        if self.cpu_port is None:
            raise DataplaneError("no CPU port configured (--cpu-port)")
        if self._running:
            self._inject.append(frame)
            os.eventfd_write(self._wake_fd, 1)
        else:
            self.process(self.cpu_port, frame)

    def set_packet_in_handler(self, handler: Callable[[bytes], None]) -> None:
        self._packet_in = handler

    def set_digest_handler(self, handler: Callable[[str, tuple[int, ...]], None]) -> None:
        self._digest = handler

    def set_port_status_handler(self, handler: Callable[[int, bool], None] | None) -> None:
        """handler(port, up) runs on its own thread, in carrier-change order: the data
        plane thread holds the switch lock while it notices a change, and a handler that
        takes the P4Runtime server's lock (while a Write there waits for the switch lock)
        would deadlock both. None: no more events, and the thread ends."""
        self._port_status = handler
        if handler is None:
            self._stop_port_status()
        elif self._running:
            self._start_port_status()

    def _start_port_status(self) -> None:
        if self._port_events is None:
            self._port_events = queue.SimpleQueue()
            threading.Thread(target=self._deliver_port_status, args=(self._port_events,),
                             name="p4switch-portstatus", daemon=True).start()

    def _stop_port_status(self) -> None:
        """stop(): the thread ends after the events already queued (start() makes a new
        one). A process that forks must not carry threads it no longer needs."""
        if self._port_events is not None:
            self._port_events.put(None)
            self._port_events = None

    def _deliver_port_status(self, events: queue.SimpleQueue) -> None:
        while True:
            event = events.get()
            if event is None:
                return
            port, up = event
            try:
                self._port_status(port, up)
            except Exception as e:  # noqa: BLE001 - a handler error must not stop the next
                self._log(f"port status handler failed: {e}")

    def port_is_up(self, port: int) -> bool:
        return self._port_up.get(port, False)

    # ------------------------------------------------------------ threads
    def start(self) -> None:
        """Open the ports (raises PortError) and start the data-plane thread."""
        if self._running:
            return
        socks = {}
        try:
            for port, iface in self.ports.items():
                socks[port] = open_port(iface)
        except PortError:
            for s in socks.values():
                s.close()
            raise
        self._socks = socks
        if self.pcap_dir:
            os.makedirs(self.pcap_dir, exist_ok=True)
            for port, iface in self.ports.items():
                self._pcap_in[port] = PcapWriter(os.path.join(self.pcap_dir, f"{iface}_in.pcap"))
                self._pcap_out[port] = PcapWriter(os.path.join(self.pcap_dir, f"{iface}_out.pcap"))
        for port, iface in self.ports.items():
            self._port_up[port] = carrier(iface)
            pq = self.tm.port(port)
            pq.up = self._port_up[port]
            if port not in self._pcap_out and port not in self._wire_loss:
                pq.send = socks[port].send
        self._wake_fd = os.eventfd(0, os.EFD_NONBLOCK | os.EFD_CLOEXEC)
        self._long_lived()
        self._running = True
        if self._port_status is not None:
            self._start_port_status()
        self._thread = threading.Thread(target=self._run, name=f"p4switch-dp{self.device_id}",
                                        daemon=True)
        self._thread.start()
        self.specialisation.start()

    def stop(self) -> None:
        if not self._running:
            return
        self.specialisation.stop()
        self._running = False
        self._stop_port_status()
        if self._wake_fd is not None:  # _wake() only writes while running
            try:
                os.eventfd_write(self._wake_fd, 1)
            except OSError:
                pass
        if self._thread is not None:
            self._thread.join(timeout=5)
        for s in self._socks.values():
            s.close()
        self._socks = {}
        for pq in self.tm.ports.values():
            pq.send = None
        for pc in (*self._pcap_in.values(), *self._pcap_out.values()):
            pc.close()
        self._pcap_in.clear()
        self._pcap_out.clear()
        if self._wake_fd is not None:
            os.close(self._wake_fd)
            self._wake_fd = None
        if self._log_out is not None and self._log_out is not sys.stderr:
            self._log_out.flush()

    def _wake(self) -> None:
        if self._running and self._wake_fd is not None:
            try:
                os.eventfd_write(self._wake_fd, 1)
            except OSError:
                pass

    def _flush_pcaps(self) -> None:
        for pc in (*self._pcap_in.values(), *self._pcap_out.values()):
            pc.flush()

    def _poll_carrier(self, flush: bool = True) -> None:
        for port, iface in self.ports.items():
            up = carrier(iface)
            if up != self._port_up.get(port):
                self._port_up[port] = up
                self.tm.port(port).up = up
                if self._trace:
                    self._trace(f"Port {port} ({iface}) is {'up' if up else 'down'}")
                if self._port_events is not None:
                    self._port_events.put((port, up))
        if flush:
            self._flush_pcaps()

    def _event_sources(self) -> tuple:
        """The data-plane thread's epoll over its ports' sockets (fd -> (port, recv,
        buffer size)), the wake eventfd, a deadline timer and the carrier monitor.
        Carrier changes come from netlink (RTMGRP_LINK); polling /sys every
        CARRIER_POLL_S is the fallback. With no ports and no pcap, nothing here wakes
        an idle switch."""
        ep = select.epoll()
        fd_port = {}
        for port, s in self._socks.items():
            ep.register(s.fileno(), select.EPOLLIN)
            fd_port[s.fileno()] = (port, s.recv, frame_buffer_size(self.ports[port]))
        ep.register(self._wake_fd, select.EPOLLIN)
        timer = DeadlineTimer()
        if timer.fd is not None:
            ep.register(timer.fd, select.EPOLLIN)
        links = None
        if self.ports:
            try:
                links = LinkMonitor()
                ep.register(links.fileno(), select.EPOLLIN)
                self._poll_carrier()  # a change between start() and the subscription
            except OSError:
                links = None
        return ep, fd_port, timer, links

    def _take_injected(self, prog: Program | None, now: float) -> None:
        """The controller's packet-outs, in as from the CPU port."""
        try:
            os.eventfd_read(self._wake_fd)
        except BlockingIOError:
            pass
        while self._inject:
            frame = self._inject.popleft()
            if prog is not None and self.cpu_port is not None:
                self.tm.note_activity(now)
                self._ingress(prog, self._new_packet(prog, frame, self.cpu_port, now), now)
                self._run_resubmits(prog, now)

    def _run(self) -> None:
        ep, fd_port, timer, links = self._event_sources()
        links_fd = links.fileno() if links is not None else None
        housekeeping = (self.ports and links is None) or bool(self._pcap_in or self._pcap_out)
        tm = self.tm
        lock = self._lock
        monotonic = time.monotonic
        next_carrier = monotonic() + CARRIER_POLL_S if housekeeping else None
        wake_fd = self._wake_fd
        pcap_in = self._pcap_in
        fast_prog = None
        batch = self._batch_path(None)
        control_pending, control_idle = self._control_pending, self._control_idle
        yield_to_control = self._yield_to_control
        try:
            while self._running:
                deadline = tm.next_deadline()
                if next_carrier is not None and (deadline is None or deadline > next_carrier):
                    deadline = next_carrier
                if timer.fd is not None:
                    timer.arm(deadline)
                    events = ep.poll()
                elif deadline is None:
                    events = ep.poll()
                else:
                    events = ep.poll(max(0.0, deadline - monotonic()))
                if control_pending[0]:  # a write is waiting: it goes first
                    control_idle.wait(CONTROL_YIELD_MAX_S)
                with lock:
                    prog = self.program
                    if prog is not fast_prog:
                        fast_prog = prog
                        batch = self._batch_path(prog)
                    now = monotonic()
                    for fd, _ev in events:
                        if control_pending[0]:
                            yield_to_control()
                        entry = fd_port.get(fd)
                        if entry is not None:
                            port, recv, bufsize = entry
                            tm.note_activity(now)
                            self._frames_at = now
                            pc = pcap_in.get(port)
                            batch(recv, bufsize, port, now, int((now - self.t0) * 1e6), pc)
                            if self._resubmits and prog is not None:
                                self._run_resubmits(prog, now)
                        elif fd == wake_fd:
                            self._take_injected(prog, now)
                        elif fd == timer.fd:
                            timer.consume()
                        elif fd == links_fd:
                            if links.drain():
                                self._poll_carrier(flush=False)
                    now = monotonic()
                    tm.run_due(now)
                    if next_carrier is not None and now >= next_carrier:
                        if links is None:
                            self._poll_carrier()
                        else:
                            self._flush_pcaps()
                        next_carrier = now + CARRIER_POLL_S
        finally:
            timer.close()
            if links is not None:
                links.close()
            ep.close()
