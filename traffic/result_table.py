"""The result table `python -m traffic.analysis` and `fabriclab run` print: one line per
flow and a total line, columns as traffic/analysis.py's docstring defines them."""

from __future__ import annotations

import math

COLUMNS = (("flow", 10), ("sent", 10), ("recv", 10), ("lost", 8), ("reord", 8), ("dups", 8),
           ("rx_pps", 10), ("dly_min", 10), ("dly_avg", 10), ("dly_max", 10), ("rate", 5))


def format_table(metrics: dict) -> str:
    """Fixed-column table, one line per flow and a total line (columns: module doc)."""
    header = "#" + "".join(f"{name:>{width}}" for name, width in COLUMNS)[1:]
    units = "#" + "".join(f"{u:>{w}}" for u, (_, w) in zip(
        ("", "(frames)", "(frames)", "", "", "", "(fps)", "(us)", "(us)", "(us)", ""),
        COLUMNS, strict=True))[1:]
    lines = [header, units]
    for flow_id, d in metrics["flows"].items():
        delay = d.get("delay_us") or {}
        lines.append(_row(flow_id, d, delay.get("min"), delay.get("mean"), delay.get("max"),
                          d.get("rx_pps"), d.get("rate_kept")))
    lines.append(_row("total", metrics, None, None, None, None, metrics.get("rate_kept")))
    transport = _transport_line(metrics)
    if transport:
        lines.append(transport)
    if metrics.get("partial"):
        lines.append("# PARTIAL: " + "; ".join(metrics.get("problems", [])))
    elif metrics.get("suspect"):
        lines.append("# SUSPECT: " + "; ".join(metrics.get("problems", [])))
    return "\n".join(lines)


def _transport_line(m: dict) -> str:
    """Retransmission, ACK/NAK and failed-link figures, for runs that have any ("" if none)."""
    if not (m.get("retransmitted") or m.get("ack_frames") or m.get("nak_frames")
            or m.get("lost_on_failed_links") is not None):
        return ""
    parts = [f"{_cell(m.get('transmissions'))} transmissions",
             f"{_cell(m.get('retransmitted'))} retransmitted",
             f"{_cell(m.get('lost_in_fabric'))} lost in fabric",
             f"{_cell(m.get('ack_frames'))} ACK", f"{_cell(m.get('nak_frames'))} NAK"]
    if m.get("lost_on_failed_links") is not None:
        links = ", ".join(f"{k} {v}" for k, v in (m.get("lost_on_failed_links_by_link") or {})
                          .items())
        parts.append(f"{m['lost_on_failed_links']} lost on failed links ({links})")
    return "# transport: " + ", ".join(parts)


def _row(label, d, dmin, davg, dmax, pps, kept) -> str:
    cells = (label, d.get("sent"), d.get("received"), d.get("lost"), d.get("reordered"),
             d.get("duplicates"), pps, dmin, davg, dmax,
             None if kept is None else ("ok" if kept else "LOW"))
    return "".join(f"{_cell(v):>{w}}" for v, (_, w) in zip(cells, COLUMNS, strict=True))


def _cell(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return "-" if math.isnan(value) else f"{value:.1f}"
    return str(value)
