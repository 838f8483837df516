"""Report sections of the RC transport and of a training job (traffic/report.py draws the
rest). Each reads the typed metrics only, so a comparison's metrics.json (one per fabric
in `training`, no NICs of its own) renders as well as a single run's.

* RC transport: per flow of every NIC, retransmissions and the part of them that a
  timeout started while the flow's class was paused or out of credit
  (`retransmitted_while_paused`: the finding behind a retransmission storm in a PFC
  storm), timeouts that went back and those deferred to the link, go-backs a NAK
  started, and the measured round trip with the timeout it gives (traffic/rc_rto.py).
* Training job: per fabric, the job's figures (definitions in traffic/training.py).
"""

from __future__ import annotations

from traffic.metrics import RunMetrics, TrainingMetrics

TRANSPORT_COLUMNS = ("host", "flow", "retransmitted", "while paused", "timeouts", "deferred",
                     "NAK go-backs", "srtt ms", "rto ms", "rtt samples")
LINE_FLOWS = 5  # flows named in the transport line, most retransmissions while paused first
TRAINING_COLUMNS = ("fabric", "iterations", "fault-free ms", "comm share", "efficiency",
                    "slowed", "failures", "gap per failure ms (usual)", "interruptions",
                    "compute lost s", "lost per day s")


def _fmt(value, digits: str = ".3g") -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return format(value, digits)
    return str(value)


def transport_rows(m: RunMetrics) -> list[tuple[str, ...]]:
    """One row per RC flow with retransmissions, timeouts or deferrals, per NIC."""
    rows = []
    for host, s in sorted(m.nics.items()):
        for flow, f in sorted((s.get("rc_per_flow") or {}).items(), key=lambda kv: int(kv[0])):
            busy = f.get("retransmitted") or f.get("timeouts") or f.get("timeouts_deferred")
            if not busy:
                continue
            rtt = f.get("rtt") or {}
            rows.append((host, flow, _fmt(f.get("retransmitted")),
                         _fmt(f.get("retransmitted_while_paused")), _fmt(f.get("timeouts")),
                         _fmt(f.get("timeouts_deferred")), _fmt(f.get("nak_go_backs")),
                         _fmt(rtt.get("srtt_ms")), _fmt(rtt.get("rto_ms")),
                         _fmt(rtt.get("samples"))))
    return rows


def transport_line(m: RunMetrics) -> str | None:
    """The run's RC finding in one line (None for a run without RC)."""
    rc = [s.get("rc") for s in m.nics.values() if s.get("transport") == "rc" and s.get("rc")]
    if not rc:
        return None
    total = sum(r.get("retransmitted", 0) for r in rc)
    paused = sum(r.get("retransmitted_while_paused", 0) for r in rc)
    deferred = sum(r.get("timeouts_deferred", 0) for r in rc)
    timeouts = sum(r.get("timeouts", 0) for r in rc)
    naks = sum(r.get("nak_go_backs", 0) for r in rc)
    per_flow = sorted(((f["retransmitted_while_paused"], host, flow)
                       for host, s in m.nics.items()
                       for flow, f in (s.get("rc_per_flow") or {}).items()
                       if f.get("retransmitted_while_paused")), key=lambda t: (-t[0], t[1:]))
    flows = [f"{host}/{flow}: {n}" for n, host, flow in per_flow[:LINE_FLOWS]]
    if len(per_flow) > LINE_FLOWS:
        flows.append(f"{len(per_flow) - LINE_FLOWS} more flows")
    mode = next((s.get("rc_config", {}).get("paused_timeouts") for s in m.nics.values()
                 if s.get("rc_config")), None)
    line = (f"RC transport: {total} frames retransmitted, {paused} of them by timeouts while "
            f"the flow's class was paused or out of credit"
            + (f" ({', '.join(flows)})" if flows else "")
            + f"; {timeouts} timeouts went back, {deferred} deferred to the link"
            + (f" (paused timeouts: {mode})" if mode else "")
            + f"; {naks} go-backs started by a NAK")
    return line


def training_rows(training: dict[str, TrainingMetrics]) -> list[tuple[str, ...]]:
    rows = []
    for name, t in training.items():
        gap_text = ", ".join(_gap(g) for g in t.failure_gaps) or "-"
        rows.append((name, f"{t.iterations_done}/{t.iterations_planned}",
                     _fmt(t.baseline_iteration_ms), _fmt(t.comm_share),
                     _fmt(t.parallel_efficiency), str(t.iterations_slowed), str(t.failures),
                     gap_text, str(t.interruptions), _fmt(t.compute_lost_s),
                     _fmt(t.compute_lost_per_day_s)))
    return rows


def _gap(g) -> str:
    """A failure's gap: ms, `never` (a frame in flight was never delivered: the job
    stopped), `idle` (nothing crossing the link was in flight)."""
    if not g.recovered:
        return "never"
    if g.gap_ms is None:
        return "idle"
    return f"{g.gap_ms:.0f}" + (f" ({g.usual_wait_ms:.0f})" if g.usual_wait_ms else "")


def training_notes(training: dict[str, TrainingMetrics]) -> list[str]:
    notes = []
    for name, t in training.items():
        if t.interruptions:
            notes.append(f"{name}: interrupted at {t.interrupted_at_s} s, a queue pair "
                         f"exhausted its retry limit ({'; '.join(t.interrupted_by)}): "
                         f"{_fmt(t.rollback_s)} s rolled back to the last checkpoint + the "
                         f"restart = {_fmt(t.compute_lost_s)} s of compute lost")
        else:
            notes.append(f"{name}: no queue pair exhausted its retry limit: not interrupted")
        if t.compute_lost_per_day_s is not None:
            notes.append(f"{name}: at {t.failures_per_day:g} failures a day, "
                         f"{_fmt(t.compute_lost_per_failure_s)} s lost per failure, "
                         f"{t.compute_lost_per_day_s / 3600:.3g} h of compute a day"
                         + (" (more than the day: the job makes no progress)"
                            if (t.compute_lost_day_share or 0) > 1 else
                            f" ({t.compute_lost_day_share:.1%} of it)"))
        notes += [f"{name}: {p}" for p in t.problems]
    return notes
