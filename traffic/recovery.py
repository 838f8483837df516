"""Recovery from a link failure: which flows crossed the failed link, which of them the
data plane protected, and each flow's gap at the receiver (DESIGN.md "Measurements").

Flow paths are read off the routes the SM installed at the start (switch -> DLID
-> egress port) over the fabric description; a link is named `a-b` as reports
name it (topologies/link_names.py).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path

from topologies.description import Fabric, NodeKind
from topologies.link_names import same_link
from traffic.analysis import arrivals_from_recv_logs, recovery_gaps
from traffic.metrics import RecoveryGap

Routes = Mapping[str, Mapping[int, int | None]]


def flows_of(flow_files: Iterable[Path | str]) -> dict[int, tuple[str, int]]:
    """Flow id -> (source host, DLID), from the NICs' FLOWS.json files."""
    out: dict[int, tuple[str, int]] = {}
    for path in flow_files:
        data = json.loads(Path(path).read_text())
        for flow in data.get("flows", ()):
            out.setdefault(flow["flow"], (data["name"], flow["dlid"]))
    return out


def path_links(fabric: Fabric, routes: Routes, src: str, dlid: int,
               host_of_lid: Mapping[int, str]) -> list[str]:
    """The links (`a-b`, in the direction of travel) a frame from `src` to `dlid` crosses."""
    switch, _port = fabric.host_switch(src)
    links = [f"{src}-{switch}"]
    for _hop in range(len(fabric.switches) + 1):
        port = routes.get(switch, {}).get(dlid)
        peer = next((p for q, p, _pp in fabric.neighbours(switch) if q == port), None)
        if peer is None:
            break  # no route: the frames go nowhere (counted as no_route)
        links.append(f"{switch}-{peer}")
        if peer == host_of_lid.get(dlid) or fabric.node(peer).kind is NodeKind.HOST:
            break
        switch = peer
    return links


def flow_paths(fabric: Fabric, routes: Routes, flows: Mapping[int, tuple[str, int]],
               lids: Mapping[str, int]) -> dict[int, list[str]]:
    """Flow id -> the links its frames cross on the routes installed at the start."""
    host_of_lid = {lid: name for name, lid in lids.items()}
    return {flow: path_links(fabric, routes, src, dlid, host_of_lid)
            for flow, (src, dlid) in flows.items()}


def protected_flows(link: str, paths: Mapping[int, list[str]],
                    flows: Mapping[int, tuple[str, int]], backups: Routes) -> set[int]:
    """Flows whose path enters `link` at a switch holding a backup port for their DLID."""
    out = set()
    for flow, links in paths.items():
        for hop in links:
            if same_link(hop, link):
                upstream = hop.partition("-")[0]
                if backups.get(upstream, {}).get(flows[flow][1]) is not None:
                    out.add(flow)
                break
    return out


def directions(link: str, paths: Mapping[int, list[str]]) -> dict[int, str]:
    """Flow id -> the direction it crosses `link` in (`a->b`), for the flows that do."""
    out = {}
    for flow, links in paths.items():
        hop = next((hop for hop in links if same_link(hop, link)), None)
        if hop is not None:
            out[flow] = hop.replace("-", "->", 1)
    return out


def agent_timeline(link_ports: str, down_ns: int, timeline: Iterable[Mapping]) -> dict:
    """detection_ms and switchover_ms of a failed link from the agents' reports in the
    SM's timeline (both ends' port_down records of that link): detection, from the
    fault to the later end's carrier loss seen; switchover, the longer of the two ends'
    liveness writes. None where an end did not report (or its write failed)."""
    ends = [r for r in timeline if r.get("event") == "port_down"
            and r.get("link") == link_ports and r.get("detected_ns", 0) >= down_ns - 1e9]
    detection = switchover = None
    if ends:
        detection = round(max(r["detected_ns"] for r in ends) / 1e6 - down_ns / 1e6, 3)
        if all(r.get("switchover_ns") for r in ends):
            switchover = max(round((r["switchover_ns"] - r["detected_ns"]) / 1e6, 3)
                             for r in ends)
    return {"detection_ms": detection, "switchover_ms": switchover}


def recovery(link: str, down_ns: int, paths: Mapping[int, list[str]],
             flows: Mapping[int, tuple[str, int]], backups: Routes,
             recv_logs: list[Path]) -> dict:
    """The recovery figures of the metrics for the first failed link.

    recovery_gap_ms: frames reaching the receivers' ports (copies the RC transport
    then discarded too), the data plane's gap; delivery_gap_ms: in-order delivery,
    which with RC also waits for the lost frames' retransmission. Flows crossing the
    failed link only; `protected` flows had a backup port where they entered it (the
    other direction is rerouted by notification, or waits for the SM's global reroute).
    recovery_gap_by_direction: the largest gap of the flows crossing the link in each
    direction (`a->b`)."""
    direction = directions(link, paths)
    crossing = set(direction)
    protected = protected_flows(link, paths, flows, backups) & crossing
    out: dict = {"protected_flows": tuple(sorted(protected))}
    for key, delivered_only in (("recovery", False), ("delivery", True)):
        arrivals = arrivals_from_recv_logs(recv_logs, delivered_only)
        gaps = recovery_gaps({f: ts for f, ts in arrivals.items() if f in crossing}, down_ns)
        typed = {flow: RecoveryGap(**gap, protected=int(flow) in protected,
                                   direction=direction[int(flow)])
                 for flow, gap in gaps.items()}
        out[key] = typed
        values = [g.gap_ms for g in typed.values() if g.gap_ms is not None]
        out[f"{key}_gap_ms"] = max(values) if values else None
        values = [g.gap_ms for g in typed.values() if g.gap_ms is not None and g.protected]
        out[f"{key}_gap_protected_ms"] = max(values) if values else None
    by_direction: dict[str, float] = {}
    for flow, gap in out["recovery"].items():
        way = direction[int(flow)]
        if gap.gap_ms is not None:
            by_direction[way] = max(by_direction.get(way, 0.0), gap.gap_ms)
    out["recovery_gap_by_direction"] = dict(sorted(by_direction.items()))
    if not crossing:
        out["problems"] = [f"no flow crosses the failed link {link}: no recovery gap"]
    return out
