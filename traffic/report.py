"""The run report and the sweep report: Markdown and self-contained HTML with plots.

`write_report(run_dir)` reads what a run left behind (metrics.json, scenario.json,
topology.json, telemetry.json, nics/*.recv.csv) and writes report.md and
report.html next to them; `write_sweep_report(sweep_dir)` does the same for a
sweep (sweep.json and one run dir per point). Every figure is optional: an input
that is missing or cannot be read leaves its section out with one line saying
why, and the rest of the report is still written. The HTML embeds its plots as
base64 PNGs (no external assets, no JavaScript); report.md links the same PNGs,
written to figures/ in the same directory.

Figures and their definitions (DESIGN.md, "Measurements"):

* headline: the metrics.json figures, algbw/busbw as nccl-tests defines them,
  and the scale (link rate in packets per second) with whether every NIC kept it.
* goodput: frames a NIC delivered (admitted 1: not dropped by its buffer nor
  discarded by RC) per flow per bin (10 ms, wider for long runs),
  as frames per second; a vertical line at each executed fault.
* stall spread: per (switch, port) the time the head of an egress queue waited
  for a pause to end or for credit (telemetry blocked_ns, summed over classes),
  with the pause frames the port sent; host NICs appear with port "nic".
* buffer peak: highest ingress buffer occupancy per (switch, port), packets.
* CCT per collective id, and the SM's reroute timeline per port-down event.
* the fabric: tiers from the topology, hosts at the bottom; a failed link red
  (dashed when it came back up), a link with a paused or blocked end orange, and
  line width by data frames carried (class_tx of both ends).

    python -m traffic.report RUN_DIR|SWEEP_DIR
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

from traffic import report_sections
from traffic.metrics import RunMetrics
from traffic.report_fabric import fabric_section
from traffic.report_figures import (
    buffer_peak_section,
    cct_section,
    goodput_section,
    sm_timeline_section,
    stall_spread_section,
)
from traffic.report_model import (
    Note,
    RunFiles,
    Section,
    Table,
    bytes_per_s,
    cell,
    guarded,
    load_run,
    natural,
)
from traffic.report_qos import qos_section
from traffic.report_render import write_document
from traffic.report_sweep import write_sweep_report

HEADLINE = ("sent", "received", "lost", "unexplained_loss", "reordered", "duplicates",
            "pause_frames", "credit_frames", "cct_ms", "algbw", "busbw", "recovery_gap_ms")
# Shown for runs that counted transmissions (runs analysed before RC transport have none).
TRANSPORT_HEADLINE = ("transmissions", "retransmitted", "lost_in_fabric", "lost_on_failed_links",
                      "ack_frames", "nak_frames", "victim_goodput_ratio",
                      "recovery_gap_protected_ms", "delivery_gap_ms", "suspect")

__all__ = ["write", "write_report", "write_sweep_report", "run_sections", "main"]


def _headline(run: RunFiles) -> Section:
    m: RunMetrics = run.need("metrics")
    if m.compared_runs:  # a comparison of fabrics: the frame figures are in each run
        return Section("Headline", [Table(("metric", "value"), (
            ("verdict", f"**{m.verdict}**"),
            *((f"run on {name}", f"`{d}`") for name, d in m.compared_runs.items()))),
            *_compared_table(m, run.scenario),
            *(Note(f"verdict: {reason}") for reason in m.verdict_reasons),
            *(Note(f"problem: {problem}") for problem in m.problems)])
    rows = []
    for key in HEADLINE:
        value = getattr(m, key)
        text = bytes_per_s(value) if key in ("algbw", "busbw") and value is not None else cell(value)
        rows.append((key, text))
    if m.transmissions:  # runs analysed before the RC transport have no transport figures
        rows += [(key, _transport_cell(m, key)) for key in TRANSPORT_HEADLINE]
    rows.append(("verdict", f"**{m.verdict}**"))
    rows.append(("scale", _scale(run)))
    rows.append(("rate kept", _rate_kept(m)))
    section = Section("Headline", [Table(("metric", "value"), tuple(rows))])
    r = m.reconciliation
    if r is not None:  # traffic/reconcile.py: every frame lost, per kind
        section.blocks.append(Table(("frame kind", "sent", "captured", "lost", "NICs took"), tuple(
            (k.kind, cell(k.sent), cell(k.received), cell(k.lost), cell(k.processed))
            for k in r.kinds)))
        section.blocks.append(Note(
            f"reconciliation: {r.lost} lost in the fabric = {r.counted_drops} counted drops + "
            f"{r.on_failed_links} on failed links + {r.held_in_fabric} held at the end + "
            f"{r.unexplained} unexplained"))
    if m.error:
        section.blocks.append(Note(f"The run ended with an error: {m.error}"))
    if m.partial:
        section.blocks.append(Note("The metrics are partial: some inputs could not be read."))
    section.blocks.extend(Note(f"verdict: {reason}") for reason in m.verdict_reasons)
    section.blocks.extend(Note(f"problem: {problem}") for problem in m.problems)
    for name, check in m.checks.items():
        section.blocks.append(Note(f"check {name}: {'ok' if check.ok else 'FAILED'} ({check})"))
    return section


def _transport_cell(m: RunMetrics, key: str) -> str:
    """A transport headline value, with its breakdown where metrics.json has one."""
    value = getattr(m, key)
    if key == "suspect":
        return "-" if value is None else ("**yes**: loss no counter or failed link explains"
                                          if value else "no")
    text = cell(value)
    if key == "lost_on_failed_links" and m.lost_on_failed_links_by_link:
        text += " (" + ", ".join(f"{k}: {cell(v)}"
                                 for k, v in m.lost_on_failed_links_by_link.items()) + ")"
    if key == "victim_goodput_ratio" and m.victim_goodput is not None:
        g = m.victim_goodput
        text += (f" ({cell(g.fault_pps)} of {cell(g.baseline_pps)} frames/s "
                 "without the fault)")
    return text


def _scale(run: RunFiles) -> str:
    rates = set()
    for link in (run.topology or {}).get("links", []):
        rate = (link.get("params") or {}).get("rate_pps")
        if rate is not None:
            rates.add(rate)
    if not rates and run.scenario:
        rate = (run.scenario.get("link") or {}).get("rate_pps")
        if rate is not None:
            rates.add(rate)
    if not rates:
        return "link rate unknown (no topology.json or scenario.json)"
    return "links at " + ", ".join(f"{r:g}" for r in sorted(rates)) + " packets/s"


def _rate_kept(m: RunMetrics) -> str:
    nics = m.nics
    if not nics:
        return cell(m.rate_kept) + " (no NIC summaries)"
    low = [f"{name} ({s.get('rate_reason') or 'rate not kept'})"
           for name, s in sorted(nics.items(), key=lambda kv: natural(kv[0]))
           if isinstance(s, dict) and not s.get("rate_kept", False)]
    cpu = m.switch_cpu or {}
    for name, ms in sorted((cpu.get("starved") or {}).items(), key=lambda kv: natural(kv[0])):
        at = cpu["switches"][name].get("at_s")
        low.append(f"switch {name} waited {ms:g} ms for a CPU"
                   + (f" from {at:g} s" if at is not None else "")
                   + " (its frames piled up before its pipeline)")
    if low:
        return "NO: " + "; ".join(low)
    capacity = m.capacity or {}
    fits = capacity.get("fits")
    switches = ("switches within host capacity" if fits else
                "switch load above host capacity" if fits is False else
                "switch capacity not assessed")
    return f"yes: all {len(nics)} NICs kept their rate; {switches}"


def _rc_transport(run: RunFiles) -> Section | None:
    """None (no section) for a run without the RC transport."""
    m = run.metrics
    line = report_sections.transport_line(m) if m is not None else None
    if line is None:
        return None
    rows = report_sections.transport_rows(m)
    blocks: list = [Note(line)]
    if rows:
        blocks.append(Table(report_sections.TRANSPORT_COLUMNS, tuple(rows)))
    return Section("RC transport", blocks)


def _compared_table(m: RunMetrics, scenario: dict | None) -> list[Table]:
    """The compared fabrics side by side in the scenario's [[compare]] order, one row per
    fabric's run, the columns any of them measured (none for a comparison written before
    the figures were kept)."""
    if not m.compared:
        return []
    keys = [k for k in HEADLINE if any(f.get(k) is not None for f in m.compared.values())]
    keys.append("verdict")
    declared = [c.get("name") for c in (scenario or {}).get("compare", [])
                if isinstance(c, dict)]  # metrics.json keeps its keys sorted
    names = sorted(m.compared, key=lambda n: (declared.index(n) if n in declared
                                              else len(declared), n))
    return [Table(("fabric", *keys), tuple(
        (name, *(bytes_per_s(f.get(k)) if k in ("algbw", "busbw") and f.get(k) is not None
                 else cell(f.get(k)) for k in keys))
        for name in names for f in [m.compared[name]]))]


def _training(run: RunFiles) -> Section | None:
    """None (no section) for a run without a training job."""
    m = run.metrics
    if m is None or not m.training:
        return None
    return Section("Training job", [
        Table(report_sections.TRAINING_COLUMNS,
              tuple(report_sections.training_rows(m.training))),
        *(Note(n) for n in report_sections.training_notes(m.training))])


def _qos(run: RunFiles) -> Section | None:
    """None (no section at all) for a run without partitions or QoS."""

    m = run.metrics
    if m is None or not (m.qos or m.arbitration):
        return None
    return qos_section(run)


RUN_SECTIONS: tuple[tuple[str, Callable[[RunFiles], Section | None]], ...] = (
    ("Headline", _headline), ("Training job", _training), ("RC transport", _rc_transport),
    ("Goodput per flow", goodput_section),
    ("Pause and credit stall spread", stall_spread_section), ("Buffer peak per port", buffer_peak_section),
    ("Collective completion time", cct_section), ("SM reroute timeline", sm_timeline_section),
    ("The fabric", fabric_section), ("Partitions and QoS", _qos))


def run_sections(run: RunFiles) -> list[Section]:
    sections = [guarded(title, lambda b=build: b(run)) for title, build in RUN_SECTIONS]
    return [s for s in sections if s is not None]  # None: not applicable to this run


def _run_intro(run: RunFiles) -> list[str]:
    m, s = run.metrics or RunMetrics(), run.scenario or {}
    lines = []
    if s.get("description"):
        lines.append(s["description"])
    facts = [f"{k}: `{v}`" for k, v in (("topology", m.topology or s.get("topology")),
                                        ("flow control", m.flow_control
                                         or s.get("flow_control")),
                                        ("routing", m.routing or s.get("routing")),
                                        ("reroute", m.reroute or s.get("reroute")),
                                        ("target", m.target)) if v]
    if facts:
        lines.append(", ".join(facts))
    lines.append(f"run directory: `{run.run_dir.name}`")
    lines.extend(_live_view_line(run.run_dir))
    return lines


def _live_view_line(run_dir: Path) -> list[str]:
    """The link to the run's live view, replayed from its recording (docs/liveview.md)."""
    if (run_dir / "liveview" / "index.html").exists():
        line = "live view, replayed from the run's recording: " \
               "[liveview/index.html](liveview/index.html)"
        if (run_dir / "liveview.png").exists():
            line += " (a browser's screenshot during the run: [liveview.png](liveview.png))"
        return [line]
    if (run_dir / "liveview.jsonl").exists():
        return ["live view recorded (`liveview.jsonl`) but not replayable here: "
                f"`fabriclab report {run_dir}` says why"]
    return []


def write_report(run_dir: Path) -> tuple[Path, Path]:
    """Write report.md and report.html for one run dir; returns their paths.

    Never raises for a run's inputs: what cannot be read is named in the report."""
    run = load_run(Path(run_dir))
    title = (run.metrics.scenario if run.metrics else "") or (run.scenario or {}).get("name") \
        or run.run_dir.name
    return write_document(run.run_dir, str(title), _run_intro(run), run_sections(run))


# --------------------------------------------------------------------------- sweeps


def write(directory: Path) -> tuple[Path, Path]:
    """The sweep report for a sweep dir (it holds sweep.json), the run report otherwise."""
    directory = Path(directory)
    if (directory / "sweep.json").exists():
        return write_sweep_report(directory)
    return write_report(directory)


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m traffic.report", description=__doc__.split(
        "\n")[0])
    parser.add_argument("dirs", nargs="+", type=Path, metavar="RUN_DIR|SWEEP_DIR")
    args = parser.parse_args(None if argv is None else list(argv))
    status = 0
    for directory in args.dirs:
        if not directory.is_dir():
            print(f"error: {directory} is not a directory", file=sys.stderr)
            status = 2
            continue
        for path in write(directory):
            print(path)
    return status


if __name__ == "__main__":
    sys.exit(main())
