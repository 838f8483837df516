"""The stress test of a bring-up, on a running fabric: the planned rounds of pairwise
flows (fabriclab/stress_plan.py), then all-to-all over every host, each through the
hosts' NIC emulators (fabriclab/hosts.py), with every switch's counters read over
P4Runtime before and after (controller/readout.py).

What a phase measures, per channel (one direction of one link, named by its sending
end): frames sent and frames that arrived, data frames dropped at either end by reason,
pause and credit frames, the time the sender's queue was blocked by flow control, and
the rate achieved. A host's side of its link is measured by its NIC (sent, received,
time blocked).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path

from controller.readout import on_every_switch, read_drops, read_telemetry
from fabriclab.hosts import START_MARGIN_S, NicFleet, NicSettings
from fabriclab.stress_plan import Channel, Flow
from topologies.description import Fabric, NodeKind
from traffic.collectives import CollectiveSpec, address_book, write_flow_files

INGRESS_REASONS = ("headroom", "not_fabric")  # drops counted at the port frames came in on
SENDER_REASONS = ("tail",)  # drops counted at the port frames were to leave by
# fabric.p4's per-port totals of every frame (data, credit, pause, probe): the cable's view
PORT_COUNTERS = {"rx_port": "rx_port_counter", "tx_port": "tx_port_counter"}


@dataclass(frozen=True)
class Snapshot:
    """Every switch's counters at one moment: {switch: {port: {name: value}}} summed over
    classes, and drops {switch: {(port, reason): packets}}."""

    ports: dict[str, dict[int, dict[str, int]]]
    drops: dict[str, dict[tuple[int, str], int]]
    unreadable: dict[str, str]


def _port_totals(sm, fabric: Fabric) -> dict[str, dict | Exception]:
    """Every frame a switch port received (rx_port) and transmitted (tx_port), all kinds."""
    def read(name: str) -> dict[int, dict[str, int]]:
        conn = sm.connections[name]
        ports = [p for p, _peer, _pp in fabric.neighbours(name)]
        cells = {key: conn.read_counters(counter, indices=ports)
                 for key, counter in PORT_COUNTERS.items()}
        return {p: {key: cells[key].get(p, (0, 0))[0] for key in cells} for p in ports}

    return on_every_switch(fabric, read)


def snapshot(sm, fabric: Fabric, num_classes: int) -> Snapshot:
    telemetry = read_telemetry(sm.connections, fabric, num_classes)
    drops, unreadable = read_drops(sm, fabric)
    totals = _port_totals(sm, fabric)
    ports: dict[str, dict[int, dict[str, int]]] = {}
    for switch, per in telemetry.items():
        if "error" in per or isinstance(totals.get(switch), Exception):
            unreadable.setdefault(switch, per.get("error") or str(totals.get(switch)))
            continue
        ports[switch] = {int(p): {k: sum(v) for k, v in cells.items() if isinstance(v, list)}
                         for p, cells in per.items()}
        for port, values in totals[switch].items():
            ports[switch].setdefault(port, {}).update(values)
    return Snapshot(ports, {sw: {k: pk for k, (pk, _b) in d.items()} for sw, d in drops.items()},
                    unreadable)


@dataclass
class ChannelLoad:
    """What one channel carried during one phase."""

    sent: int = 0  # data frames the sender transmitted
    wire_sent: int = 0  # frames that left the sender, of the kinds the receiver counts
    wire_arrived: int = 0  # ... and arrived at the receiver
    sender_drops: dict[str, int] = field(default_factory=dict)
    receiver_drops: dict[str, int] = field(default_factory=dict)
    pause_sent_back: int = 0  # pause frames the receiving end sent the sender
    credits_back: int = 0  # credit frames the receiving end returned
    blocked_ms: float = 0.0  # the sender's queue waited for pause/credit
    window_s: float = 0.0  # how long the traffic on it was offered
    nic_socket_drops: int = 0  # frames that reached a host the NIC could not read in time
    receiver_late_ms: float = 0.0  # the receiving NIC began reading this late

    @property
    def link_errors(self) -> int:
        """Frames that left the sender and never arrived (no switch counted them)."""
        return max(0, self.wire_sent - self.wire_arrived)

    @property
    def achieved_pps(self) -> float | None:
        return self.sent / self.window_s if self.window_s > 0 else None

    def as_dict(self) -> dict:
        return {"sent": self.sent, "wire_sent": self.wire_sent,
                "wire_arrived": self.wire_arrived, "link_errors": self.link_errors,
                "sender_drops": self.sender_drops, "receiver_drops": self.receiver_drops,
                "pause_frames": self.pause_sent_back, "credit_frames": self.credits_back,
                "blocked_ms": round(self.blocked_ms, 3),
                "achieved_pps": None if self.achieved_pps is None else round(self.achieved_pps, 1),
                "window_s": round(self.window_s, 3), "nic_socket_drops": self.nic_socket_drops}


def _delta(before: Snapshot, after: Snapshot, switch: str, port: int, name: str) -> int:
    a = after.ports.get(switch, {}).get(port, {}).get(name, 0)
    return a - before.ports.get(switch, {}).get(port, {}).get(name, 0)


def _drops(before: Snapshot, after: Snapshot, switch: str, port: int,
           reasons: tuple[str, ...]) -> dict[str, int]:
    out = {}
    for (p, reason), n in after.drops.get(switch, {}).items():
        if p == port and reason in reasons:
            d = n - before.drops.get(switch, {}).get((p, reason), 0)
            if d:
                out[reason] = d
    return out


def channel_load(fabric: Fabric, channel: Channel, before: Snapshot, after: Snapshot,
                 nics: dict[str, dict], window_s: float) -> ChannelLoad:
    """The counters of one channel between two snapshots; host ends from NIC summaries
    (a NIC counts data frames: the switch's side then counts data frames too)."""
    node, port = channel
    peer, peer_port = {p: (n, pp) for p, n, pp in fabric.neighbours(node)}[port]
    load = ChannelLoad(window_s=window_s)
    to_host = fabric.node(peer).kind is NodeKind.HOST
    if fabric.node(node).kind is NodeKind.HOST:
        nic = nics.get(node, {})
        load.sent = load.wire_sent = nic.get("sent", 0)
        load.blocked_ms = (nic.get("flow_control") or {}).get("blocked_ms_total", 0.0)
        # what the switch received from the NIC, less its pause and credit frames
        load.wire_arrived = (_delta(before, after, peer, peer_port, "rx_port")
                             - _delta(before, after, peer, peer_port, "pause_rx")
                             - _delta(before, after, peer, peer_port, "credit_rx"))
    else:
        load.sent = _delta(before, after, node, port, "class_tx")
        load.wire_sent = load.sent if to_host else _delta(before, after, node, port, "tx_port")
        load.sender_drops = _drops(before, after, node, port, SENDER_REASONS)
        load.blocked_ms = _delta(before, after, node, port, "blocked_ns") / 1e6
        load.pause_sent_back = _delta(before, after, node, port, "pause_rx")
        load.credits_back = _delta(before, after, node, port, "credit_rx")
    if to_host:
        # frames the kernel dropped at the NIC's socket did arrive: the emulator (host
        # CPU), not the cable, could not keep up
        load.nic_socket_drops = nics.get(peer, {}).get("socket_drops") or 0
        load.receiver_late_ms = nics.get(peer, {}).get("late_start_ms") or 0.0
        load.wire_arrived = nics.get(peer, {}).get("received", 0) + load.nic_socket_drops
    else:
        load.receiver_drops = _drops(before, after, peer, peer_port, INGRESS_REASONS)
        if fabric.node(node).kind is NodeKind.SWITCH:
            load.wire_arrived = _delta(before, after, peer, peer_port, "rx_port")
    return load


def nic_window_s(summary: dict) -> float:
    """How long a NIC was sending: its frames over its achieved rate."""
    sent, pps = summary.get("sent", 0), summary.get("achieved_pps")
    return sent / pps if sent and pps else 0.0


# --------------------------------------------------------------------------- phases


@dataclass
class PhaseResult:
    name: str
    seconds: float
    loads: dict[Channel, ChannelLoad]
    flows: list[dict]  # {src, dst, path: ["s1:2", ...], sent, received}
    nics: dict[str, dict]
    problems: list[str] = field(default_factory=list)


def _round_files(flows: tuple[Flow, ...], book: dict, frames: int, payload: int,
                 out_dir: Path) -> dict[str, Path]:
    files: dict[str, dict] = {}
    for i, f in enumerate(flows, 1):
        src, dst = book[f.src], book[f.dst]
        for name in (f.src, f.dst):
            files.setdefault(name, {"name": name, "lid": book[name]["lid"],
                                    "mac": book[name]["mac"], "flows": [], "recvs": []})
        files[f.src]["flows"].append({"flow": i, "dst_mac": dst["mac"], "dlid": dst["lid"],
                                      "count": frames, "payload": payload})
        files[f.dst]["recvs"].append({"coll_id": 0, "step": 0, "slid": src["lid"],
                                      "frames": frames})
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {}
    for name, content in files.items():
        paths[name] = out_dir / f"{name}.flows.json"
        paths[name].write_text(json.dumps(content, indent=1) + "\n")
    return paths


def _run_nics(net, book: dict, flow_files: dict[str, Path], settings: NicSettings,
              log_dir: Path, ledger, timeout_s: float) -> dict[str, dict]:
    fleet = NicFleet(log_dir, ledger)
    try:
        start_at = fleet.start({h: net.host(h) for h in flow_files}, flow_files,
                    {h: book[h]["lid"] for h in flow_files},
                    {h: book[h]["mac"] for h in flow_files}, settings, timeout_s,
                    margin_s=START_MARGIN_S)
        summaries = fleet.wait(timeout_s + 15, stall_s=3.0, start_at=start_at)
    finally:
        fleet.stop()
    return summaries


def _settle(fabric: Fabric, settings: NicSettings, nics: dict[str, dict]) -> None:
    """Frames still queued drain at the link rate before the counters are read. Where
    the NICs received every data frame they sent, none is queued any more: only the
    flow-control frames the last ones released are still under way, for well under
    0.3 s; otherwise up to a queue per switch may still drain."""
    sent = sum(int(s.get("sent", 0) or 0) for s in nics.values())
    received = sum(int(s.get("received", 0) or 0) for s in nics.values())
    drained = not any(s.get("missing") for s in nics.values()) and received >= sent
    time.sleep(0.3 if drained else 0.3 + 64 * max(1, len(fabric.switches)) / settings.rate_pps)


def run_round(index: int, flows: tuple[Flow, ...], ctx, frames: int) -> PhaseResult:
    """One round: its flows at the configured rate, the channels on their paths measured."""
    t0 = time.monotonic()
    out_dir = ctx.run_dir / "stress" / f"round{index}"
    before = snapshot(ctx.sm, ctx.fabric, ctx.num_classes)
    files = _round_files(flows, ctx.book, frames, ctx.payload, out_dir / "flows")
    nics = _run_nics(ctx.net, ctx.book, files, ctx.settings, out_dir / "nics", ctx.ledger,
                     frames / ctx.settings.rate_pps + 10)
    _settle(ctx.fabric, ctx.settings, nics)
    after = snapshot(ctx.sm, ctx.fabric, ctx.num_classes)
    loads: dict[Channel, ChannelLoad] = {}
    flow_rows = []
    for f in flows:
        window = nic_window_s(nics.get(f.src, {}))
        for channel in f.path:
            loads[channel] = channel_load(ctx.fabric, channel, before, after, nics, window)
        flow_rows.append({"src": f.src, "dst": f.dst,
                          "path": [f"{n}:{p}" for n, p in f.path],
                          "sent": nics.get(f.src, {}).get("sent", 0),
                          "received": nics.get(f.dst, {}).get("received", 0)})
    problems = [f"{n}: counters unreadable: {why}" for n, why in after.unreadable.items()]
    problems += [f"NIC on {h}: {s.get('problem')}" for h, s in nics.items() if s.get("missing")]
    return PhaseResult(f"round {index}", round(time.monotonic() - t0, 3), loads, flow_rows,
                       nics, problems)


def run_all_to_all(ctx, frames_per_peer: int, name: str = "all-to-all") -> PhaseResult:
    """Every host sends to every other host at once; every channel measured."""
    t0 = time.monotonic()
    out_dir = ctx.run_dir / "stress" / name
    hosts = sorted(ctx.book, key=lambda h: ctx.book[h]["lid"])
    spec = CollectiveSpec(algorithm="alltoall", n=len(hosts),
                          message_bytes=frames_per_peer * len(hosts) * ctx.payload,
                          payload=ctx.payload)
    book = address_book({h: (ctx.book[h]["lid"], ctx.book[h]["mac"], ctx.book[h]["sl"])
                         for h in hosts})
    before = snapshot(ctx.sm, ctx.fabric, ctx.num_classes)
    files = write_flow_files(spec, book, out_dir / "flows")
    expected = frames_per_peer * (len(hosts) - 1)
    nics = _run_nics(ctx.net, ctx.book, files, ctx.settings, out_dir / "nics", ctx.ledger,
                     2 * expected / ctx.settings.rate_pps + 10)
    _settle(ctx.fabric, ctx.settings, nics)
    after = snapshot(ctx.sm, ctx.fabric, ctx.num_classes)
    window = max((nic_window_s(s) for s in nics.values()), default=0.0)
    loads = {ch: channel_load(ctx.fabric, ch, before, after, nics, window)
             for ch in ctx.channels}
    problems = [f"{n}: counters unreadable: {why}" for n, why in after.unreadable.items()]
    for h, s in sorted(nics.items()):
        if s.get("missing"):
            problems.append(f"all-to-all: no summary from the NIC on {h}: {s.get('problem')}")
        elif not s.get("done") and ctx.lossless:
            problems.append(f"all-to-all did not complete on {h}: received "
                            f"{s.get('received', 0)} of {expected} frames")
    return PhaseResult(name, round(time.monotonic() - t0, 3), loads,
                       [{"hosts": len(hosts), "frames_per_peer": frames_per_peer}], nics,
                       problems)
