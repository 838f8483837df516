"""The fabric drawing of a run report: tiers from the topology, hosts at the bottom, failed
links red (dashed when restored), links with a paused or blocked end orange, line width
by data frames carried."""

from __future__ import annotations

import re
from collections import defaultdict

from matplotlib.lines import Line2D

from traffic.metrics import RunMetrics
from traffic.report_model import (
    Figure,
    Note,
    ReportInputError,
    RunFiles,
    Section,
    natural,
    plt,
    png,
    telemetry_ports,
    total,
)
from traffic.stall import STALL_SHARE  # the share the run's stall analysis uses

_INTF = re.compile(r"([A-Za-z]+\d+)-eth(\d+)")


def _link_states(m: RunMetrics | None) -> tuple[dict[frozenset, str], set[str]]:
    """Executed link faults by link ({(node, port), (node, port)} -> "down"/"restored"),
    and the nodes a node fault (stall, storm, kill) targeted."""
    states: dict[frozenset, str] = {}
    nodes: set[str] = set()
    faults = m.faults if m else ()
    for f in sorted((f for f in faults if not f.error), key=lambda f: f.started_ns or 0):
        name = f.name
        ends = frozenset((n, int(p)) for n, p in _INTF.findall(name))
        if name.startswith("link_down") and len(ends) == 2:
            states[ends] = "down"
        elif name.startswith("link_up") and len(ends) == 2 and ends in states:
            states[ends] = "restored"
        else:
            nodes.update(re.findall(r"\b([hs]\d+)\b", name.replace(".ctl", " ").replace("/", " ")))
    for e in m.sm_timeline if m else ():
        ends = frozenset((n, int(p)) for n, p in re.findall(r"([A-Za-z]+\d+):(\d+)",
                                                             e.get("link", "")))
        if len(ends) == 2:
            states.setdefault(ends, "down")
    return states, nodes


def _window_ns(m: RunMetrics | None) -> int:
    """From the first to the last arrival of any flow (0 when metrics.json does not say)."""
    flows = [f for f in (m.flows.values() if m else ()) if f.first_rx_ns and f.last_rx_ns]
    if not flows:
        return 0
    return max(f.last_rx_ns for f in flows) - min(f.first_rx_ns for f in flows)


def fabric_section(run: RunFiles) -> Section:
    topo = run.need("topology")
    nodes = [n for n in topo.get("nodes", []) if isinstance(n, dict) and n.get("name")]
    links = [lk for lk in topo.get("links", []) if isinstance(lk, dict)]
    if not nodes:
        raise ReportInputError("topology.json lists no nodes")
    section = Section("The fabric")
    ports: dict[str, dict[str, dict]] = {}
    if run.telemetry is None:
        section.blocks.append(Note(f"drawn without state from the switches: {run.why.get('telemetry')}"))
    else:
        try:
            ports, problems = telemetry_ports(run)
        except ReportInputError as exc:
            problems = [f"drawn without state from the switches: {exc}"]
        section.blocks.extend(Note(p) for p in problems)
    m = run.metrics
    states, targeted = _link_states(m)
    is_host = {n["name"]: "HOST" in str(n.get("kind", "")).upper() for n in nodes}
    pos, nrows, width = _positions(nodes, links, is_host)

    def port_state(node: str, port) -> tuple[int, float, int]:
        t = ports.get(node, {}).get(str(port), {})
        return total(t.get("class_tx")), total(t.get("blocked_ns")), total(t.get("pause_tx"))

    nics = m.nics if m else {}

    def host_state(node: str) -> tuple[int, float, int]:
        fc = (nics.get(node) or {}).get("flow_control") or {}
        return ((nics.get(node) or {}).get("sent", 0), total(fc.get("blocked_ns")),
                fc.get("pauses_sent", 0) + fc.get("storm_pauses_sent", 0))

    window = _window_ns(m)
    threshold = STALL_SHARE * window if window else 0

    loads = {}
    for lk in links:
        ends = [(lk.get("a"), lk.get("a_port")), (lk.get("b"), lk.get("b_port"))]
        loads[id(lk)] = [host_state(n) if is_host.get(n) else port_state(n, p) for n, p in ends]
    peak = max([s[0] + d[0] for s, d in loads.values()] + [1])
    fig, ax = plt.subplots(figsize=(max(6, 1.3 * width), 1.8 + 1.4 * nrows))
    _draw_links(ax, links, pos, is_host, states, loads, threshold, peak)
    _draw_nodes(ax, pos, is_host, targeted)
    ax.set_xlim(-0.3, width + 0.3)
    ax.set_ylim(-0.6, nrows - 0.4)
    ax.axis("off")
    ax.set_title(f"{topo.get('name', 'fabric')}: state at the end of the run")
    section.blocks.append(Figure("fabric", png(fig),
                                 f"{len(links)} link(s), {len(states)} failed; thick-edged nodes "
                                 "were targeted by a fault"))
    return section


def _positions(nodes: list[dict], links: list[dict], is_host: dict[str, bool]
               ) -> tuple[dict[str, tuple[float, float]], int, int]:
    """(x, y) per node: hosts on row 0 under the switch they hang off (so links do not
    cross), each switch tier a row above; with the number of rows and the widest."""
    switch_tiers = sorted({n.get("tier", 0) for n in nodes if not is_host[n["name"]]})
    row_of = {n["name"]: (0 if is_host[n["name"]] else 1 + switch_tiers.index(n.get("tier", 0)))
              for n in nodes}
    pos: dict[str, tuple[float, float]] = {}
    rows: dict[int, list[str]] = defaultdict(list)
    for n in sorted(nodes, key=lambda n: natural(n["name"])):
        rows[row_of[n["name"]]].append(n["name"])
    width = max(len(r) for r in rows.values())
    for row in sorted(rows, reverse=True):
        names = rows[row]
        if row == 0:
            def under(h):
                peers = [lk["a"] if lk.get("b") == h else lk.get("b") for lk in links
                         if h in (lk.get("a"), lk.get("b"))]
                return min([pos[p][0] for p in peers if p in pos] or [0.0]), natural(h)
            names = sorted(names, key=under)
        for i, name in enumerate(names):
            pos[name] = ((i + 0.5) * width / len(names), float(row))
    return pos, len(rows), width


def _draw_links(ax, links, pos, is_host, states, loads, threshold, peak) -> None:
    """Each link: red if failed (dashed once restored), orange if an end was paused or
    blocked, its width the data frames it carried; an orange dot at a stalled end."""
    for lk in links:
        a, b = lk.get("a"), lk.get("b")
        if a not in pos or b not in pos:
            continue
        state = states.get(frozenset({(a, lk.get("a_port")), (b, lk.get("b_port"))}))
        load_a, load_b = loads[id(lk)]
        stalled = [load[1] > threshold or load[2] > 0 for load in (load_a, load_b)]
        colour = "red" if state else "orange" if any(stalled) else "tab:gray"
        lw = 1 + 6 * (load_a[0] + load_b[0]) / peak
        (xa, ya), (xb, yb) = pos[a], pos[b]
        ax.plot([xa, xb], [ya, yb], color=colour, linewidth=lw, zorder=1,
                linestyle="--" if state == "restored" else "-")
        for node, (x, y), (ox, oy), flag, port in (
                (a, (xa, ya), (xb, yb), stalled[0], lk.get("a_port")),
                (b, (xb, yb), (xa, ya), stalled[1], lk.get("b_port"))):
            px, py = x + 0.18 * (ox - x), y + 0.18 * (oy - y)
            if flag:
                ax.plot(px, py, "o", color="orange", markersize=7, zorder=2)
            if not is_host.get(node):
                ax.text(px, py, str(port), fontsize=6, ha="center", va="center", zorder=3)


def _draw_nodes(ax, pos, is_host, targeted) -> None:
    """Switches as squares, hosts as circles, thick-edged where a fault targeted them;
    the legend under the drawing."""
    for name, (x, y) in pos.items():
        edge = "orange" if name in targeted else "black"
        ax.scatter([x], [y], s=700 if not is_host[name] else 450,
                   marker="s" if not is_host[name] else "o",
                   color="#cfe2f3" if not is_host[name] else "#d9ead3", edgecolors=edge,
                   linewidths=3 if name in targeted else 1, zorder=4)
        ax.text(x, y, name, ha="center", va="center", fontsize=8, zorder=5)
    ax.legend(handles=[Line2D([], [], color="red", label="failed link"),
                       Line2D([], [], color="red", linestyle="--", label="failed, restored"),
                       Line2D([], [], color="orange", marker="o",
                              label=f"paused / blocked > {STALL_SHARE:.0%} end"),
                       Line2D([], [], color="tab:gray", linewidth=5,
                              label="width: data frames carried")],
              fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.02), ncol=4, frameon=False)
