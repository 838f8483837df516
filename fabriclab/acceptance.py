"""A bring-up's verdict: per link, per switch and for the fabric (acceptance.json).

A link passes when it is cabled as intended and, in both directions, the stress test
loaded it and found no frame lost on the cable, no frame dropped, and its configured
rate carried. Rate is judged along each flow's path: the first channel that carried
less than RATE_OK of its configured rate without being held back by flow control is
the one that limits the flow (channels after it are "limited upstream", channels before
it that were paused or credit-blocked are "held back", neither is flagged). The fabric
is ready when every link passed and every switch runs the intended program.

    acceptance.json: {"schema", "verdict": ready|not-ready, "reasons", "fabric", "phases":
    {name: seconds}, "time_to_ready_s", "switches": [...], "links": [{"link", "ends",
    "kind", "configured_pps", "verdict": passed|failed|untested, "findings": [...],
    "cabling", "directions": {"s1:3->s3:1": {"rounds": [...], "all_to_all": {...}}}}],
    "faults": [...], "errors": [...]}
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fabriclab.stress import ChannelLoad, PhaseResult
from topologies import link_names
from topologies.description import Fabric, Link

SCHEMA = "fabriclab.acceptance/1"
RATE_OK = 0.8  # share of the configured rate a loaded channel must carry
BLOCKED_SHARE = 0.2  # share of the window a sender held by pause/credit is "held back"
LOSS_TOLERANCE = 0.002  # link errors above this share of the frames sent (and > 2) fail
# Drops above this share of the frames sent fail; below it they are noted: a switch
# process descheduled on a loaded host forwards a late burst a buffer may not absorb.
DROP_TOLERANCE = 0.01
LATE_NIC_MS = 100.0  # a receiving NIC this late cannot vouch for its host link's losses
PHASES = ("compile", "power-on", "connect", "programs", "cabling", "routing", "warm-up",
          "stress rounds", "all-to-all")
NOT_BRINGUP = ("compile",)  # build work, not the fabric's: outside time to ready


def channel_name(fabric: Fabric, node: str, port: int) -> str:
    peer, peer_port = {p: (n, pp) for p, n, pp in fabric.neighbours(node)}[port]
    return f"{node}:{port}->{peer}:{peer_port}"


@dataclass
class LinkEntry:
    link: Link
    findings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    cabling: str = "ok"
    tested: set[str] = field(default_factory=set)  # directions the stress test loaded
    directions: dict[str, dict] = field(default_factory=dict)

    @property
    def verdict(self) -> str:
        if self.findings:
            return "failed"
        return "passed" if len(self.tested) == 2 else "untested"

    def as_dict(self, fabric: Fabric) -> dict:
        a, b = self.link.a, self.link.b
        kind = "switch" if all(link_names.is_switch(fabric, n) for n in (a, b)) else "host"
        return {"link": link_names.port_pair(self.link),
                "ends": [f"{a}:{self.link.a_port}", f"{b}:{self.link.b_port}"],
                "kind": kind, "configured_pps": self.link.params.rate_pps,
                "verdict": self.verdict, "findings": self.findings, "notes": self.notes,
                "cabling": self.cabling, "directions": self.directions}


def link_entries(fabric: Fabric) -> dict[tuple[str, int], LinkEntry]:
    """One entry per intended link, reachable from both of its ends."""
    out: dict[tuple[str, int], LinkEntry] = {}
    for link in fabric.links:
        entry = LinkEntry(link)
        out[(link.a, link.a_port)] = out[(link.b, link.b_port)] = entry
    return out


def judge_flow_path(fabric: Fabric, path: list[tuple[tuple[str, int], ChannelLoad]],
                    entries: dict[tuple[str, int], LinkEntry], phase: str) -> None:
    """Findings of one pairwise flow's channels: losses, drops, and which one limited it."""
    limited_by = None
    for channel, load in path:
        entry, name = entries[channel], channel_name(fabric, *channel)
        entry.directions.setdefault(name, {}).setdefault("rounds", []).append(
            {"phase": phase, **load.as_dict()})
        _losses(entry, name, load, phase, lossless=True)
        rate = entry.link.params.rate_pps
        achieved = load.achieved_pps
        if limited_by is not None:
            entry.notes.append(f"{name} ({phase}): limited upstream by {limited_by}")
            entry.tested.add(name)
            continue
        if achieved is None:
            entry.findings.append(f"{name} ({phase}): no traffic measured")
            continue
        entry.tested.add(name)
        if achieved >= RATE_OK * rate:
            continue
        window = load.window_s or 1.0
        if load.blocked_ms / 1e3 > BLOCKED_SHARE * window:
            entry.notes.append(f"{name} ({phase}): held back by flow control "
                               f"{load.blocked_ms:.0f} ms")
            continue
        entry.findings.append(f"{name}: carried {achieved:.0f} pps of its configured "
                              f"{rate} pps ({achieved / rate:.0%}) in {phase}")
        limited_by = name


def _losses(entry: LinkEntry, name: str, load: ChannelLoad, phase: str,
            lossless: bool) -> None:
    if load.nic_socket_drops:
        entry.notes.append(f"{name}: the NIC could not read {load.nic_socket_drops} frames "
                           f"in time in {phase} (host CPU, not the cable)")
    errors = load.link_errors
    if errors and load.receiver_late_ms > LATE_NIC_MS:
        # frames that reached the host before its NIC read anything are not counted
        entry.notes.append(f"{name}: {errors} frames not counted in {phase}: the receiving "
                           f"NIC started {load.receiver_late_ms:.0f} ms late (host CPU)")
    elif errors > max(2, LOSS_TOLERANCE * load.sent):
        entry.findings.append(f"{name}: {errors} of {load.sent} frames lost on the cable "
                              f"(link errors, {errors / max(1, load.sent):.1%}) in {phase}")
    drops = {**{f"{name.split('->')[0]} {r}": n for r, n in load.sender_drops.items()},
             **{f"{name.split('->')[1]} {r}": n for r, n in load.receiver_drops.items()}}
    if drops:
        text = ", ".join(f"{n} at {where}" for where, n in sorted(drops.items()))
        if sum(drops.values()) <= DROP_TOLERANCE * load.sent:
            entry.notes.append(f"{name}: {text} dropped in {phase} (within "
                               f"{DROP_TOLERANCE:.0%} of {load.sent} frames)")
        elif lossless:
            entry.findings.append(f"{name}: frames dropped in {phase}: {text}")
        else:
            entry.notes.append(f"{name}: congestion drops in {phase} (lossy mode): {text}")


def judge_all_to_all(fabric: Fabric, result: PhaseResult,
                     entries: dict[tuple[str, int], LinkEntry], lossless: bool) -> None:
    for channel, load in result.loads.items():
        entry, name = entries[channel], channel_name(fabric, *channel)
        entry.directions.setdefault(name, {})["all_to_all"] = load.as_dict()
        _losses(entry, name, load, "all-to-all", lossless)


@dataclass
class Acceptance:
    """Everything acceptance.json says, built up phase by phase."""

    fabric: Fabric
    entries: dict[tuple[str, int], LinkEntry]
    phases: dict[str, float] = field(default_factory=dict)
    switches: list[dict] = field(default_factory=list)
    faults: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # fabric-wide findings
    settings: dict = field(default_factory=dict)
    rounds: list[dict] = field(default_factory=list)

    @classmethod
    def of(cls, fabric: Fabric) -> Acceptance:
        return cls(fabric, link_entries(fabric))

    def links(self) -> list[LinkEntry]:
        seen, out = set(), []
        for entry in self.entries.values():
            if id(entry) not in seen:
                seen.add(id(entry))
                out.append(entry)
        return sorted(out, key=lambda e: link_names.port_pair(e.link))

    def reasons(self) -> list[str]:
        out = list(self.errors)
        out += [f"switch {s['switch']}: {s['detail']}" for s in self.switches
                if s["status"] != "ok"]
        failed = [e for e in self.links() if e.verdict == "failed"]
        untested = [e for e in self.links() if e.verdict == "untested"]
        out += [f"link {link_names.port_pair(e.link)}: {f}" for e in failed for f in e.findings]
        if untested:
            out.append("not tested: " + ", ".join(link_names.port_pair(e.link)
                                                  for e in untested))
        return out + self.problems

    @property
    def verdict(self) -> str:
        return "not-ready" if self.reasons() else "ready"

    def as_dict(self) -> dict:
        links = [e.as_dict(self.fabric) for e in self.links()]
        return {"schema": SCHEMA, "verdict": self.verdict, "reasons": self.reasons(),
                "fabric": self.fabric.name, "settings": self.settings,
                "phases": self.phases,
                "phase_order": [p for p in PHASES if p in self.phases],
                "time_to_ready_s": round(sum(v for k, v in self.phases.items()
                                             if k not in NOT_BRINGUP), 3),
                "faults": self.faults, "errors": self.errors, "problems": self.problems,
                "switches": self.switches, "rounds": self.rounds,
                "summary": {v: sum(1 for lk in links if lk["verdict"] == v)
                            for v in ("passed", "failed", "untested")},
                "links": links}
