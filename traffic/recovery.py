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
from traffic.metrics import RecoveryGap
from traffic.nic_summary import read_recv_log
from traffic.timing import arrivals_from_recv_logs, recovery_gaps

Routes = Mapping[str, Mapping[int, int | None]]


def flows_of(flow_files: Iterable[Path | str], lids: Mapping[str, int] | None = None
             ) -> dict[int, tuple[str, int]]:
    """Flow id -> (source host, DLID), from the NICs' FLOWS.json files; a flow that names
    its destination (the NIC asked the SA, traffic/addressing.py) takes its LID from
    `lids` (host -> LID, the SM's)."""
    out: dict[int, tuple[str, int]] = {}
    for path in flow_files:
        data = json.loads(Path(path).read_text())
        for flow in data.get("flows", ()):
            dlid = flow.get("dlid")
            if dlid is None:
                dlid = (lids or {}).get(flow.get("dst"), 0)
            out.setdefault(flow["flow"], (data["name"], dlid))
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


def link_seen_down_ns(link_ports: str, down_ns: int, timeline: Iterable[Mapping]) -> int | None:
    """When the first end's agent saw the failed link's carrier drop (None: no report)."""
    seen = [r["detected_ns"] for r in timeline if r.get("event") == "port_down"
            and r.get("link") == link_ports and r.get("detected_ns", 0) >= down_ns - 1e9]
    return min(seen) if seen else None


def sent_and_received(recv_logs: Iterable[Path | str], delivered_only: bool
                      ) -> dict[int, list[tuple[int, int]]]:
    """flow -> (receive ns, send ns) of its frames at the receivers, by receive time."""
    out: dict[int, list[tuple[int, int]]] = {}
    for path in recv_logs:
        for r in read_recv_log(path):
            if r.admitted == 1 or not delivered_only:
                out.setdefault(r.flow, []).append((r.recv_ns, r.send_ns))
    for frames in out.values():
        frames.sort()
    return out


def outage_gaps(frames: Mapping[int, list[tuple[int, int]]], failure_ns: int, cut_ns: int
                ) -> dict[int, float | None]:
    """Per flow, the outage the failure caused at the receiver, ms: the longest silence
    from its last frame before the failure until the first frame sent at or after
    `cut_ns` arrives. The carrier was already down then, so that frame came another way;
    the frames before it that were already past the failed link do not end the outage,
    and the silences after it (a collective step waiting for its peer, the transport
    waiting for its window) are not the fabric's. None: no frame before the failure, or
    none sent after the cut ever arrived."""
    out: dict[int, float | None] = {}
    for flow, seq in frames.items():
        before = [f for f in seq if f[0] < failure_ns]
        resumed = next((f for f in seq if f[0] >= failure_ns and f[1] >= cut_ns), None)
        if not before or resumed is None:
            out[flow] = None
            continue
        times = [before[-1][0]] + [t for t, _s in seq if failure_ns <= t <= resumed[0]]
        out[flow] = max(b - a for a, b in zip(times, times[1:])) / 1e6
    return out


def round_trip_ms(frames: Mapping[int, list[tuple[int, int]]], failure_ns: int,
                  window_ns: int = 100_000_000) -> float | None:
    """One round trip of the given flows when the failure struck: twice the largest of
    their mean one-way delays over the frames received in the `window_ns` before it (the
    queues a window of RC frames stands in included: the round trip the flow lives
    with, the ACK coming back the same way). None without such frames."""
    means = []
    for seq in frames.values():
        delays = [recv - sent for recv, sent in seq if failure_ns - window_ns <= recv < failure_ns]
        if delays:
            means.append(sum(delays) / len(delays))
    return round(2 * max(means) / 1e6, 3) if means else None


def recovery(link: str, down_ns: int, paths: Mapping[int, list[str]],
             flows: Mapping[int, tuple[str, int]], backups: Routes,
             recv_logs: list[Path], cut_ns: int | None = None) -> dict:
    """The recovery figures of the metrics for the first failed link.

    recovery_gap_ms: frames reaching the receivers' ports (copies the RC transport
    then discarded too), the data plane's gap: with `cut_ns` (the link seen down by
    its first agent) the outage of `outage_gaps`, else the longest silence within a
    second (timing.recovery_gaps); delivery_gap_ms: in-order delivery, which with RC
    also waits for the lost frames' retransmission (the longest silence within a
    second: the transport's and the collective's waits included). Flows crossing the
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
        if key == "recovery":
            frames = {f: fr for f, fr in sent_and_received(recv_logs, False).items()
                      if f in crossing}
            out["rtt_ms"] = round_trip_ms(frames, down_ns)
            if cut_ns is not None:
                outages = outage_gaps(frames, down_ns, cut_ns)
                for flow, gap in gaps.items():
                    gap["gap_ms"] = outages.get(int(flow))
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
