"""Every frame a run lost, per frame kind, against what explains it.

Kinds (DESIGN.md "Wire formats"):

* data: DATA frames of a flow. Sent = the NICs' logged transmissions; lost =
  transmissions no receiver captured (analysis `lost_in_fabric`).
* rc_control: the RC transport's ACK/NAK frames (DATA-kind, BTH opcode
  OPCODE_RC_ACK, in no flow). Sent = the NICs' `rc.acks_sent + rc.naks_sent`;
  received = ACK/NAK frames the receivers' captures saw; lost = the difference.
  They are not logged per frame, so with a failed link their losses that the
  counters leave unexplained are taken as lost on the failed link.
* pause, credit: link-local flow-control frames (a switch port to its host);
  never forwarded, so never lost in the fabric. Their check: a NIC cannot have
  taken more of them than its port's capture saw.

The fabric's figures then reconcile as

    lost (data + rc_control) = counted drops + lost on failed links
                               + held in switch buffers at the end + unexplained

Counted drops are the switches' drop counters of every reason that applies to a
fabric frame (all but `not_fabric`). `unexplained` != 0 is a failed check: above
0 a frame vanished where no counter saw it; below 0 the switches counted drops
of frames that no NIC sent, or counted one twice (the sign of mixing kinds).
"""

from __future__ import annotations

from collections.abc import Mapping

from traffic.metrics import KindAccount, Reconciliation

NON_FABRIC_DROPS = frozenset({"not_fabric"})  # drop reasons that never hit a fabric frame


def _nic_sum(nics: Mapping[str, Mapping], section: str, *keys: str) -> int:
    return sum(int((summary.get(section) or {}).get(key, 0) or 0)
               for summary in nics.values() for key in keys)


def kind_accounts(figures: Mapping, nics: Mapping[str, Mapping]) -> tuple[KindAccount, ...]:
    """The per-kind rows from the analysis figures and the NICs' summaries."""
    transmissions = int(figures.get("transmissions") or 0)
    lost_data = int(figures.get("lost_in_fabric") or 0)
    control_sent = _nic_sum(nics, "rc", "acks_sent", "naks_sent")
    control_seen = int(figures.get("ack_frames") or 0) + int(figures.get("nak_frames") or 0)
    return (
        KindAccount("data", transmissions, transmissions - lost_data, lost=lost_data),
        KindAccount("rc_control", control_sent, control_seen, lost=control_sent - control_seen),
        KindAccount("pause", None, int(figures.get("pause_frames") or 0),
                    processed=_nic_sum(nics, "flow_control", "pauses_received",
                                       "resumes_received", "pfc_frames_ignored")),
        KindAccount("credit", None, int(figures.get("credit_frames") or 0),
                    processed=_nic_sum(nics, "flow_control", "credit_frames_received",
                                       "credit_requests_received")),
    )


def reconcile(figures: Mapping, nics: Mapping[str, Mapping], *, failures: bool = False,
              held_in_fabric: int = 0) -> Reconciliation | None:
    """The run's reconciliation; None without usable switch counters (nothing to hold
    the losses against: the metrics are partial then, and say why)."""
    drops = figures.get("drops_by_reason")
    if drops is None:
        return None
    kinds = kind_accounts(figures, nics)
    by_kind = {k.kind: k for k in kinds}
    problems = []
    data, control = by_kind["data"], by_kind["rc_control"]
    if control.lost < 0:
        problems.append(f"the receivers captured {control.received} ACK/NAK frames, "
                        f"{-control.lost} more than the NICs sent ({control.sent})")
    for k in (by_kind["pause"], by_kind["credit"]):
        if k.processed > k.received:
            problems.append(f"the NICs took {k.processed} {k.kind} frames, their ports' "
                            f"captures saw {k.received}: a capture missed frames")
    lost = data.lost + max(0, control.lost)
    counted = sum(n for reason, n in drops.items() if reason not in NON_FABRIC_DROPS)
    remaining = max(0, lost - counted - held_in_fabric)
    data_on_links = int(figures.get("lost_on_failed_links") or 0)
    on_links = min(remaining, data_on_links + (max(0, control.lost) if failures else 0))
    unexplained = lost - counted - held_in_fabric - on_links
    if unexplained < 0:
        problems.append(
            f"the switches counted {counted} drop(s), {-unexplained} more than the "
            f"{lost} frame(s) lost in the fabric ({data.lost} data, {max(0, control.lost)} "
            "RC control) and held at the end: drops of frames no NIC sent, or counted twice")
    elif unexplained > 0:
        problems.append(f"{unexplained} frame(s) lost in the fabric that no switch counter, "
                        "no failed link and no switch buffer explain")
    return Reconciliation(kinds=kinds, lost=lost, counted_drops=counted,
                          on_failed_links=on_links, held_in_fabric=held_in_fabric,
                          unexplained=unexplained, problems=tuple(problems))
