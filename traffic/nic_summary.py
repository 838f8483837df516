"""The NIC's results: rate check, per-collective times, summary JSON and the logs."""

from __future__ import annotations

import json
import os
import time
from collections import namedtuple
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path

from traffic.nic_config import (
    RATE_SHORTFALL_LIMIT,
    RECV_LOG_HEADER,
    SUMMARY_SCHEMA,
    NicConfigError,
)
from traffic.nic_rc import FLOW_COUNTERS
from traffic.nic_socket import socket_drops
from traffic.sender import write_log_rows


class NicSummary:
    """Mixin of Nic: what a run of the emulator reports."""

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
            "tx_retries": self.tx_retries, "tx_link_down": self.tx_link_down,
            "flows": per_flow,
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
            "rc_failures": list(self.rc_failures),  # per flow that hit rc_retry_limit: when
            "rc_config": {"rto": self.cfg.rc_rto, "timeout_ms": self.cfg.rc_timeout_ms,
                          "rto_min_ms": self.cfg.rc_rto_min_ms,
                          "rto_max_ms": self.cfg.rc_rto_max_ms,
                          "retry_limit": self.cfg.rc_retry_limit,
                          "paused_timeouts": self.cfg.rc_paused_timeouts,
                          "timeout_resend": self.cfg.rc_timeout_resend,
                          "retransmission": self.cfg.rc_retransmission,
                          "window": self.cfg.rc_window,
                          "window_control": self.cfg.rc_window_control},
            "rc_per_flow": {str(flow): {**dict.fromkeys(FLOW_COUNTERS, 0),
                                        **self._flow_rc.get(flow, {}), "rtt": est.as_dict(),
                                        "window": self._window(flow).as_dict()}
                            for flow, est in sorted(self._rtt.items())} if self.rc else {},
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
