"""The Subnet Administrator (SA): the SM's address book served in band, as InfiniBand's SA.

    sa = sm.serve_sa("results/run/sa_log.jsonl")   # after bring_up; SubnetManager.serve_sa
    ...                                            # hosts query, the SA answers
    sm.close()                                     # stops the SA too

A host asks for the path to a peer with a GET PathRecord frame (LRH kind SA,
traffic/frames.py) sent out of its port; the switch it is attached to punts
it to the SM as a packet-in carrying the ingress port (fabric.p4, like
PROBE/HELLO), and the SA answers with a GET_RESP sent as packet-out of that
same port: the destination's LID, SL (the SM's per-destination VL layering,
`sm.vl_of`), GUID, MAC and name, and the requester's own LID and GUID (so a
host learns its LID with its first query). A destination the subnet does not
have is answered with status NO_SUCH_DESTINATION, one the installed routes
do not reach from the requester's switch with NO_PATH, and so is one that
shares no partition with the requester (`sm.partitions`, controller/partitions.py:
both members, one of them full), as InfiniBand's SA answers path queries only
within a partition; REPORTs likewise name only destinations the host may reach.

After a global reroute (`SubnetManager.handle_port_event` calls `publish`),
every destination whose LID or SL changed is announced to every host in a
REPORT (InfiniBand's InformInfo/trap report), one packet-out of each host's
port; a host acknowledges with REPORT_RESP carrying the REPORT's tid, and an
unacknowledged REPORT is sent again every `report_retry_s`, `report_tries`
times in all.

Answers come from the view `publish` last took (LIDs, SLs, routes, the
fabric without failed links), so an answer never runs ahead of the REPORT
that announces a change. Each answered query is one record in `log` (and a
JSON line in `log_path`): not in the SM's reroute timeline, whose records the
reports read as port events.

The SA reads every switch connection's packet-in queue (one thread per
switch); packet-ins that are not SA frames are counted in `ignored` and
dropped, so `controller.discovery.discover` must not run on the same
connections while the SA serves.
"""

from __future__ import annotations

import itertools
import json
import queue
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from traffic.frames import (
    LRH_KIND_OFFSET,
    SA_MAX_RECORDS,
    Kind,
    PathRecord,
    SaFrameError,
    SaMessage,
    SaMethod,
    SaStatus,
    mac_to_int,
    parse_sa_frame,
    sa_frame,
)

if TYPE_CHECKING:
    from controller.p4runtime_client import PacketIn
    from controller.sm import SubnetManager

SWITCH_MAC_PREFIX = 0x02_00_00_FF_00_00  # fabric.p4: a switch port's MAC is this | port


@dataclass(frozen=True)
class HostEntry:
    """One host of the address book as the SA publishes it."""

    name: str
    guid: int
    lid: int
    sl: int
    mac: str | None
    attached: tuple[str, int]  # (switch, port)


@dataclass(frozen=True)
class SubnetView:
    """What the SA answers from: the address book, routes and cables at one moment."""

    hosts: dict[str, HostEntry]
    routes: Mapping[str, Mapping[int, int]]
    peer_at: dict[tuple[str, int], str]  # (switch, port) -> node at the other end, live cables
    by_guid: dict[int, HostEntry] = field(default_factory=dict)
    by_lid: dict[int, HostEntry] = field(default_factory=dict)
    by_port: dict[tuple[str, int], HostEntry] = field(default_factory=dict)

    @classmethod
    def of(cls, sm: SubnetManager) -> SubnetView:
        from controller.sm import DEFAULT_SL

        if not sm.lids:
            raise RuntimeError("the SA serves the SM's LIDs: assign them (bring_up) first")
        hosts = {}
        for node in sm.fabric.hosts:
            lid = sm.lids[node.name]
            hosts[node.name] = HostEntry(node.name, node.guid, lid, sm.vl_of.get(lid, DEFAULT_SL),
                                         sm.host_macs.get(node.name),
                                         sm.fabric.host_switch(node.name))
        peer_at = {}
        for link in sm.working_fabric().links:
            peer_at[(link.a, link.a_port)] = link.b
            peer_at[(link.b, link.b_port)] = link.a
        return cls(hosts, sm.routes, peer_at, {h.guid: h for h in hosts.values()},
                   {h.lid: h for h in hosts.values()},
                   {h.attached: h for h in hosts.values()})

    def find(self, query: PathRecord) -> HostEntry | None:
        """The destination a query names: by GUID, else LID, else host name."""
        if query.dguid:
            return self.by_guid.get(query.dguid)
        if query.dlid:
            return self.by_lid.get(query.dlid)
        return self.hosts.get(query.dname)

    def hops(self, switch: str, dest: HostEntry) -> int | None:
        """Switch-to-switch hops the installed routes take from `switch` to `dest`
        (None: no route, a dead cable, a wrong host or a loop on the way)."""
        here = switch
        for hops in range(len(self.routes) + 1):
            port = self.routes.get(here, {}).get(dest.lid)
            if port is None:
                return None
            peer = self.peer_at.get((here, port))
            if peer == dest.name:
                return hops
            if peer is None or peer not in self.routes:
                return None
            here = peer
        return None


@dataclass
class _PendingReport:
    switch: str
    port: int
    frame: bytes
    host: str
    tries: int
    due: float


class SubnetAdministrator:
    """Answers PathRecord queries and sends REPORTs for one SubnetManager; see the module doc."""

    def __init__(self, sm: SubnetManager, log_path: Path | str | None = None,
                 report_retry_s: float = 0.2, report_tries: int = 5) -> None:
        self.sm = sm
        self.log_path = Path(log_path) if log_path is not None else None
        self.report_retry_s = report_retry_s
        self.report_tries = report_tries
        self.view = SubnetView.of(sm)
        self.log: list[dict] = []  # one record per answered query (see `_log`)
        self.ignored = 0  # packet-ins that were not SA frames
        self.reports_unacknowledged = 0  # REPORTs given up on after report_tries
        self._tids = itertools.count(1)
        self._pending: dict[int, _PendingReport] = {}  # tid -> REPORT waiting for REPORT_RESP
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    # ------------------------------------------------------------------ serving
    def start(self) -> SubnetAdministrator:
        """One reader thread per switch connection, and one for REPORT re-sends."""
        if self.log_path is not None:
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
        for name in sorted(self.sm.connections):
            self._threads.append(threading.Thread(target=self._serve_switch, args=(name,),
                                                  daemon=True, name=f"sa-{name}"))
        self._threads.append(threading.Thread(target=self._resend_reports, daemon=True,
                                              name="sa-reports"))
        for thread in self._threads:
            thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=2)
        self._threads = []

    def _serve_switch(self, name: str) -> None:
        packet_ins = self.sm.connections[name].packet_ins
        while not self._stop.is_set():
            try:
                packet = packet_ins.get(timeout=0.1)
            except queue.Empty:
                continue
            self.handle(name, packet)

    def handle(self, switch: str, packet: PacketIn) -> None:
        """One packet-in from `switch`: a query is answered, a REPORT_RESP ends a REPORT."""
        payload = packet.payload
        if len(payload) <= LRH_KIND_OFFSET or payload[LRH_KIND_OFFSET] != Kind.SA:
            self.ignored += 1
            return
        port = packet.metadata.get("ingress_port", -1)
        received_ns = time.time_ns()
        try:
            message = parse_sa_frame(payload)
        except SaFrameError as exc:
            self._log({"event": "sa_query", "switch": switch, "port": port,
                       "status": SaStatus.BAD_REQUEST.name, "error": str(exc),
                       "received_ns": received_ns})
            return
        if message.method is SaMethod.REPORT_RESP:
            with self._lock:
                self._pending.pop(message.tid, None)
        elif message.method is SaMethod.GET:
            self._answer(switch, port, message, received_ns)
        else:
            self.ignored += 1

    def _answer(self, switch: str, port: int, query: SaMessage, received_ns: int) -> None:
        view = self.view
        requester = view.by_port.get((switch, port))
        slid = requester.lid if requester else query.slid
        status, record = self.path_record(switch, port, query)
        self.sm.connections[switch].packet_out(
            sa_frame(SaMethod.GET_RESP, query.tid, [record] if record else [], status,
                     src_mac=SWITCH_MAC_PREFIX | port, dst_mac=mac_to_int(query.src_mac),
                     dlid=slid),
            {"egress_port": port})
        asked = query.records[0] if len(query.records) == 1 else PathRecord()
        sent_ns = time.time_ns()
        entry = {"event": "sa_query", "switch": switch, "port": port,
                 "requester": requester.name if requester else None, "tid": query.tid,
                 "destination": _describe(asked), "status": SaStatus(status).name,
                 "received_ns": received_ns, "answered_ns": sent_ns,
                 "answer_us": round((sent_ns - received_ns) / 1e3, 1)}
        if record is not None:
            entry.update(dlid=record.dlid, sl=record.sl)
        self._log(entry)

    def path_record(self, switch: str, port: int, query: SaMessage
                    ) -> tuple[SaStatus, PathRecord | None]:
        """The answer to a GET from (switch, port): a status, and the record when OK."""
        view = self.view
        if len(query.records) != 1:
            return SaStatus.BAD_REQUEST, None
        asked = query.records[0]
        if not (asked.dguid or asked.dlid or asked.dname):
            return SaStatus.BAD_REQUEST, None
        dest = view.find(asked)
        if dest is None:
            return SaStatus.NO_SUCH_DESTINATION, None
        if dest.attached != (switch, port) and view.hops(switch, dest) is None:
            return SaStatus.NO_PATH, None
        requester = view.by_port.get((switch, port))
        if not self._same_partition(requester, dest):
            return SaStatus.NO_PATH, None
        return SaStatus.OK, self._record(requester, dest, fallback_slid=query.slid)

    def _same_partition(self, source: HostEntry | None, dest: HostEntry) -> bool:
        """Without partitions every host reaches every other; with them, only a peer
        that shares a partition (an unknown requester port reaches nobody)."""
        partitions = getattr(self.sm, "partitions", None)
        if partitions is None:
            return True
        return source is not None and partitions.shared(source.name, dest.name) is not None

    @staticmethod
    def _record(source: HostEntry | None, dest: HostEntry, fallback_slid: int = 0
                ) -> PathRecord:
        return PathRecord(dlid=dest.lid, sl=dest.sl,
                          slid=source.lid if source else fallback_slid,
                          sguid=source.guid if source else 0, dguid=dest.guid,
                          dname=dest.name, dmac=dest.mac)

    # ------------------------------------------------------------------ notices
    def publish(self, resend_all: bool = False) -> dict:
        """Take the SM's current view; REPORT every destination whose LID or SL changed
        (every destination with `resend_all`) to every host. Returns what was sent,
        for the SM's timeline record."""
        old, new = self.view, SubnetView.of(self.sm)
        self.view = new
        changed = sorted((h for name, h in new.hosts.items()
                          if resend_all or name not in old.hosts
                          or (old.hosts[name].lid, old.hosts[name].sl) != (h.lid, h.sl)),
                         key=lambda h: h.lid)
        frames = 0
        if changed:
            for host in sorted(new.hosts.values(), key=lambda h: h.lid):
                frames += self._report(host, [self._record(host, d) for d in changed
                                              if d.name != host.name
                                              and self._same_partition(host, d)])
        return {"sa_changed_paths": len(changed), "sa_reports_sent": frames}

    def _report(self, host: HostEntry, records: list[PathRecord]) -> int:
        """REPORT frames to one host (as many as the records need); the number sent."""
        switch, port = host.attached
        conn = self.sm.connections.get(switch)
        if conn is None or not records:
            return 0
        sent = 0
        for start in range(0, len(records), SA_MAX_RECORDS):
            tid = next(self._tids)
            frame = sa_frame(SaMethod.REPORT, tid, records[start:start + SA_MAX_RECORDS],
                             src_mac=SWITCH_MAC_PREFIX | port,
                             dst_mac=mac_to_int(host.mac) if host.mac else 0xFFFF_FFFF_FFFF,
                             dlid=host.lid)
            with self._lock:
                self._pending[tid] = _PendingReport(switch, port, frame, host.name, 1,
                                                    time.monotonic() + self.report_retry_s)
            conn.packet_out(frame, {"egress_port": port})
            sent += 1
        return sent

    def _resend_reports(self) -> None:
        while not self._stop.wait(min(0.05, self.report_retry_s)):
            self.resend_due(time.monotonic())

    def resend_due(self, now: float) -> int:
        """Send again every REPORT not acknowledged in time; the number re-sent."""
        due = []
        with self._lock:
            for tid, pending in list(self._pending.items()):
                if pending.due > now:
                    continue
                if pending.tries >= self.report_tries:
                    del self._pending[tid]
                    self.reports_unacknowledged += 1
                    continue
                pending.tries += 1
                pending.due = now + self.report_retry_s
                due.append(pending)
        for pending in due:
            self.sm.connections[pending.switch].packet_out(pending.frame,
                                                           {"egress_port": pending.port})
        return len(due)

    @property
    def pending_reports(self) -> dict[int, str]:
        """tid -> host of every REPORT not acknowledged yet."""
        with self._lock:
            return {tid: p.host for tid, p in self._pending.items()}

    # --------------------------------------------------------------------- log
    def _log(self, record: dict) -> None:
        self.log.append(record)
        if self.log_path is not None:
            with self.log_path.open("a") as f:
                f.write(json.dumps(record) + "\n")


def _describe(record: PathRecord) -> str:
    """A query's destination as the query named it."""
    if record.dguid:
        return f"guid {record.dguid:#018x}"
    if record.dlid:
        return f"lid {record.dlid}"
    return record.dname or "(none)"
