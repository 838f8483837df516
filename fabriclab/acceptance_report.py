"""acceptance.md and acceptance.html from acceptance.json, in the run reports' format
(traffic/report.py's document model and renderers: the same tables, no JavaScript).

    python -m fabriclab.acceptance_report RESULT_DIR
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from traffic.report_model import Note, Section, Table
from traffic.report_render import render_html, render_markdown

VERDICT_MARK = {"passed": "passed", "failed": "**FAILED**", "untested": "**untested**"}


def _phases(data: dict) -> Section:
    phases = data.get("phases", {})
    order = data.get("phase_order") or sorted(phases)
    rows = tuple((name, f"{phases[name]:.1f}") for name in order if name in phases)
    rows += (("from power-on to the verdict", f"{data.get('time_to_ready_s', 0):.1f}"),)
    return Section("Phases", [Table(("phase", "seconds"), rows)])


def _switches(data: dict) -> Section:
    rows = []
    for s in data.get("switches", []):
        running = s.get("running") or {}
        rows.append((s["switch"], s["status"] if s["status"] == "ok" else f"**{s['status']}**",
                     running.get("version") or "-", running.get("cookie", "-"),
                     running.get("p4info_sha", "-"), "yes" if s.get("pushed") else "no",
                     s.get("detail") or ""))
    if not rows:
        return Section("Switches and programs", [Note("no switch was checked")])
    return Section("Switches and programs", [Table(
        ("switch", "program", "version", "cookie", "P4Info", "loaded now", "detail"),
        tuple(rows))])


def _direction_row(name: str, d: dict) -> tuple[str, ...]:
    rounds = d.get("rounds", [])
    best = max(rounds, key=lambda r: r.get("achieved_pps") or 0) if rounds else {}
    a2a = d.get("all_to_all", {})
    drops = sum(sum(r.get("sender_drops", {}).values()) + sum(r.get("receiver_drops",
                                                                    {}).values())
                for r in [*rounds, a2a] if r)
    return (name, str(sum(r.get("sent", 0) for r in rounds)),
            str(sum(r.get("link_errors", 0) for r in rounds)),
            "-" if not best.get("achieved_pps") else f"{best['achieved_pps']:.0f}",
            str(a2a.get("sent", "-")), str(a2a.get("link_errors", "-")), str(drops),
            str(sum(r.get("pause_frames", 0) for r in [*rounds, a2a] if r)),
            str(sum(r.get("credit_frames", 0) for r in [*rounds, a2a] if r)),
            f"{sum(r.get('blocked_ms', 0) for r in [*rounds, a2a] if r):.0f}")


def _links(data: dict) -> list[Section]:
    links = data.get("links", [])
    summary = data.get("summary", {})
    verdicts = Table(("link", "kind", "configured pps", "cabling", "verdict", "findings"),
                     tuple((lk["link"], lk["kind"], str(lk["configured_pps"]), lk["cabling"],
                            VERDICT_MARK.get(lk["verdict"], lk["verdict"]),
                            "; ".join(lk["findings"]) or "-") for lk in links))
    head = Note(f"{summary.get('passed', 0)} passed, {summary.get('failed', 0)} failed, "
                f"{summary.get('untested', 0)} untested of {len(links)} links.")
    rows = tuple(_direction_row(name, d) for lk in links
                 for name, d in sorted(lk.get("directions", {}).items()))
    measured = Table(("direction", "stress frames", "link errors", "achieved pps",
                      "all-to-all frames", "all-to-all errors", "drops", "pause frames",
                      "credit frames", "blocked ms"), rows)
    notes = [Note(f"{lk['link']}: {n}") for lk in links for n in lk.get("notes", [])]
    return [Section("Links", [head, verdicts]),
            Section("Per direction", [Note("stress: the pairwise rounds (achieved pps: the "
                                           "best round); all-to-all: every host at once."),
                                      measured, *notes[:200]])]


def sections(data: dict) -> list[Section]:
    out = [Section("Verdict", [Note(f"**{data.get('verdict', '?')}**")]
                   + [Note(r) for r in data.get("reasons", [])])]
    if data.get("faults"):
        out.append(Section("Injected faults", [Note(f) for f in data["faults"]]))
    out += [_phases(data), _switches(data), *_links(data)]
    plan = data.get("rounds", [])
    if plan:
        out.append(Section("Stress rounds", [Table(
            ("round", "flows", "seconds"),
            tuple((r["name"], "; ".join(f"{f['src']}->{f['dst']}" for f in r["flows"]),
                   f"{r['seconds']:.1f}") for r in plan))]))
    return out


def write(result_dir: Path) -> tuple[Path, Path]:
    """acceptance.md and acceptance.html next to acceptance.json."""
    result_dir = Path(result_dir)
    data = json.loads((result_dir / "acceptance.json").read_text())
    title = f"Acceptance of {data.get('fabric', '?')}: {data.get('verdict', '?')}"
    intro = ["Settings: " + ", ".join(f"{k}={v}" for k, v in
                                       sorted(data.get("settings", {}).items()))]
    md, page = result_dir / "acceptance.md", result_dir / "acceptance.html"
    md.write_text(render_markdown(title, intro, sections(data), result_dir / "figures"))
    page.write_text(render_html(title, intro, sections(data)))
    return md, page


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    for path in write(Path(args[0])):
        print(f"written: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
