"""The SM's checks for a fabric's acceptance (`fabriclab bringup`, docs/run.md):
which program each switch runs, and how its cables compare with the intended fabric.

Programs: the SM names a program version by a 64-bit pipeline cookie, a hash of its
P4Info and device config, which it sets with SetForwardingPipelineConfig and reads back
with GetForwardingPipelineConfig (P4INFO_AND_COOKIE), with the P4Info's own package
name and version (`@pkginfo`) and a hash of the P4Info it reads back. A switch that runs
no program gets the intended one; a switch that already runs one is left as found and
reported when it differs (a bring-up does not silently overwrite what an operator
loaded). A switch that cannot be reached or refuses the pipeline is named with why.

Cabling: `cabling_findings` turns discovery (controller/discovery.py) into one finding
per intended link that is not cabled as planned (missing, miswired, one-way) and one
per cable found where the plan has none (unexpected), with both ends named.
"""

from __future__ import annotations

import hashlib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from controller.discovery import Discovery, PortRef
from controller.p4info import P4Info
from topologies import link_names
from topologies.description import Fabric, Link, NodeKind


@dataclass(frozen=True)
class ProgramId:
    """A program version as a switch reports it."""

    cookie: int  # the pipeline cookie (0: none set)
    p4info_sha: str  # first 12 hex digits of the SHA-256 of the serialized P4Info
    name: str = ""  # P4Info pkg_info
    version: str = ""

    def describe(self) -> str:
        label = " ".join(filter(None, [self.name, self.version and f"version {self.version}"]))
        return (f"{label + ' ' if label else ''}(cookie {self.cookie:#018x}, "
                f"P4Info {self.p4info_sha})")

    def as_dict(self) -> dict:
        return {"cookie": f"{self.cookie:#018x}", "p4info_sha": self.p4info_sha,
                "name": self.name, "version": self.version}


@dataclass(frozen=True)
class Program:
    """The intended program: its files and the id the SM gives it."""

    p4info: P4Info
    bmv2_json: Path
    id: ProgramId


def _p4info_sha(info: P4Info) -> str:
    return hashlib.sha256(info.proto.SerializeToString(deterministic=True)).hexdigest()[:12]


def program(p4info: P4Info | Path | str, bmv2_json: Path | str) -> Program:
    """The intended program with its cookie: a hash of P4Info and device config."""
    info = p4info if isinstance(p4info, P4Info) else P4Info.from_file(p4info)
    digest = hashlib.sha256(info.proto.SerializeToString(deterministic=True)
                            + Path(bmv2_json).read_bytes()).digest()
    pkg = info.proto.pkg_info
    return Program(info, Path(bmv2_json), ProgramId(
        int.from_bytes(digest[:8], "big"), _p4info_sha(info), pkg.name, pkg.version))


def running_program(conn) -> ProgramId | None:
    """What a switch says it runs (None: no pipeline)."""
    config = conn.fetch_pipeline_config()
    if config is None:
        return None
    info = P4Info(config.p4info)
    return ProgramId(config.cookie.cookie, _p4info_sha(info), config.p4info.pkg_info.name,
                     config.p4info.pkg_info.version)


@dataclass(frozen=True)
class PipelineCheck:
    switch: str
    status: str  # ok | differs | refused | unreadable | unreachable
    running: ProgramId | None
    pushed: bool  # the SM loaded the intended program (the switch ran none)
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def as_dict(self) -> dict:
        return {"switch": self.switch, "status": self.status, "pushed": self.pushed,
                "running": self.running.as_dict() if self.running else None,
                "detail": self.detail}


def _check_one(name: str, conn, intended: Program) -> PipelineCheck:
    try:
        running = running_program(conn)
    except Exception as exc:  # noqa: BLE001 - reported per switch
        return PipelineCheck(name, "unreadable", None, False, f"cannot read its pipeline: {exc}")
    pushed = False
    if running is None:
        try:
            conn.set_pipeline(intended.p4info, intended.bmv2_json, cookie=intended.id.cookie)
        except Exception as exc:  # noqa: BLE001
            return PipelineCheck(name, "refused", None, False,
                                 f"refused the pipeline {intended.id.describe()}: {exc}")
        pushed = True
        try:
            running = running_program(conn)
        except Exception as exc:  # noqa: BLE001
            return PipelineCheck(name, "unreadable", None, True,
                                 f"cannot read back the pipeline it was given: {exc}")
        if running is None:
            return PipelineCheck(name, "refused", None, True,
                                 "accepted the pipeline but reports none when read back")
    else:
        conn.fetch_pipeline()  # the SM addresses the switch's tables by its own P4Info
    if running == intended.id:
        return PipelineCheck(name, "ok", running, pushed)
    return PipelineCheck(name, "differs", running, pushed,
                         f"runs {running.describe()}, intended {intended.id.describe()}")


def check_pipelines(connections: dict, intended: Program) -> dict[str, PipelineCheck]:
    """Per switch: load the intended program where none runs, read back, compare."""
    names = sorted(connections)
    with ThreadPoolExecutor(max_workers=max(1, min(16, len(names)))) as pool:
        checks = pool.map(lambda n: _check_one(n, connections[n], intended), names)
        return dict(zip(names, checks))


# --------------------------------------------------------------------------- cabling


@dataclass(frozen=True)
class CableFinding:
    kind: str  # missing | miswired | one-way | unexpected
    link: str  # the intended link (`s1:3-s3:1`) or the cable found (unexpected)
    text: str  # one line naming both ends

    def as_dict(self) -> dict:
        return {"kind": self.kind, "link": self.link, "text": self.text}


def cabling_findings(fabric: Fabric, found: Discovery) -> list[CableFinding]:
    """One finding per switch-to-switch link not cabled as intended, and per cable at a
    port the intended fabric leaves empty."""
    seen = {lk.sent: lk.received for lk in found.links}
    out: list[CableFinding] = []
    expected_ports: set[PortRef] = set()
    for link in switch_links(fabric):
        a, b = PortRef(link.a, link.a_port), PortRef(link.b, link.b_port)
        expected_ports |= {a, b}
        name = link_names.port_pair(link)
        got_a, got_b = seen.get(a), seen.get(b)
        if got_a == b and got_b == a:
            continue
        if got_a is None and got_b is None:
            out.append(CableFinding("missing", name, f"missing cable {a} <-> {b}: no probe "
                                    "crossed it in either direction"))
        elif got_a in (b, None) and got_b in (a, None):
            sent, lost = (a, b) if got_a == b else (b, a)
            out.append(CableFinding("one-way", name, f"cable {a} <-> {b} carries probes "
                                    f"{sent} -> {lost} only"))
        else:
            ends = [f"{end} reaches {got or 'nothing'}" for end, got in ((a, got_a), (b, got_b))
                    if got != (b if end == a else a)]
            out.append(CableFinding("miswired", name, f"miswired cable {a} <-> {b}: "
                                    + ", ".join(ends)))
    for sent, received in sorted(seen.items()):
        if sent not in expected_ports:
            out.append(CableFinding("unexpected", f"{sent}-{received}",
                                    f"unexpected cable {sent} <-> {received}: the intended "
                                    f"fabric has no link at {sent}"))
    return out


def switch_links(fabric: Fabric) -> list[Link]:
    return [lk for lk in fabric.links
            if fabric.node(lk.a).kind is NodeKind.SWITCH
            and fabric.node(lk.b).kind is NodeKind.SWITCH]
