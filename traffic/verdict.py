"""A run's verdict from its metrics, with the reasons when it is not `pass`.

    error       the run did not finish (the error says why)
    partial     an input could not be read or trusted (the problems say which)
    fail        a figure does not reconcile (traffic/reconcile.py), a check failed,
                or frames were lost although every sender stayed below the link rate
                (frames lost inside a failed link's window excepted)
    stalled     a collective did not complete and no loss explains it: the fabric
                stopped moving (nothing sent or received for the stall timeout, hosts
                blocked by the link: a deadlock, an unbounded stall), or it was still
                moving when the run's time ran out (too slow; the reason says which)
    incomplete  a collective did not complete: frames were dropped (and counted) and
                the transport (ud) does not retransmit
    pass        everything else
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from traffic.metrics import RunMetrics

# From best to worst: a result made of several runs (the fabrics of a comparison, a solo run
# and its variants) has the worst of their verdicts.
SEVERITY = ("pass", "partial", "incomplete", "stalled", "fail", "error")


def worst(verdicts: Iterable[str]) -> str:
    """The worst of the runs' verdicts ("error" for no run; an unknown word ranks worst)."""
    rank = {v: i for i, v in enumerate(SEVERITY)}
    return max(verdicts, key=lambda v: rank.get(v, len(SEVERITY)), default="error")


@dataclass(frozen=True)
class Verdict:
    verdict: str
    reasons: tuple[str, ...] = ()


def _stopped_reason(m: RunMetrics) -> str:
    """Why an unfinished collective with hosts blocked by their link is `stalled`: a fabric
    that stopped (the run's stall timeout fired) reads differently from one that was still
    moving, only too slowly, when the run's time ran out."""
    held = (f"{', '.join(m.blocked_hosts)} blocked by the link at the end, "
            f"{m.held_in_fabric} transmission(s) held in switch buffers")
    if m.stalled_after_s is not None:
        return (f"the fabric stopped moving: nothing sent or received for "
                f"{m.stalled_after_s:g} s; {held}")
    return ("the run's time ran out before the collective completed, with frames still "
            f"moving (too slow, not stopped): {held}")


def decide(m: RunMetrics, *, lossless_expected: bool) -> Verdict:
    """`lossless_expected`: every sender's rate is below the link rate."""
    if m.error:
        return Verdict("error", (m.error,))
    if m.partial:
        return Verdict("partial", m.problems or ("some inputs could not be read",))
    rec = m.reconciliation
    unreconciled = rec.problems if rec is not None else ()
    collective_unfinished = m.collectives is not None and m.cct_ms is None
    if collective_unfinished and m.blocked_hosts:
        stopped = _stopped_reason(m)
        if rec is not None and rec.unexplained < 0:
            return Verdict("fail", (*unreconciled, stopped))
        # frames still queued in NICs or in flight when it stopped are no loss
        return Verdict("stalled", (stopped,))
    if unreconciled:
        return Verdict("fail", unreconciled)
    if rec is None and (m.unexplained_loss or 0) > 0:
        return Verdict("fail", (f"{m.unexplained_loss} frame(s) vanished where no switch "
                                "counter saw them",))
    failed = [f"check {name} failed: {check}" for name, check in m.checks.items()
              if not check.ok]
    if failed:
        return Verdict("fail", tuple(failed))
    if collective_unfinished:
        if m.lost:
            return Verdict("incomplete", (f"{m.lost} frame(s) dropped (and counted) and not "
                                          "retransmitted: the collective could not complete",))
        if m.stalled_after_s is not None:
            return Verdict("stalled", (f"a collective did not complete: nothing was sent or "
                                       f"received for {m.stalled_after_s:g} s, and the run "
                                       "stopped it (stall_timeout_s)",))
        return Verdict("stalled", ("a collective did not complete in time",))
    # frames lost inside a failed link's window are the fault's, not the flow control's
    on_failed = m.lost_on_failed_links or 0
    if lossless_expected and (m.lost or 0) > on_failed:
        besides = f" (besides {on_failed} on failed links)" if on_failed else ""
        return Verdict("fail", (f"{m.lost - on_failed} frame(s) lost although every sender "
                                f"stayed below the link rate{besides}",))
    return Verdict("pass")
