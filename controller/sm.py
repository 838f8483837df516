"""The subnet manager: pipeline, LIDs, routes and the address book for a whole fabric.

    sm = SubnetManager(fabric, {"s1": SwitchConnection(...), ...}, lid_map=LidMap(path))
    sm.push_pipeline("build/fabric.p4info.txtpb", "build/fabric.json")
    sm.assign_lids()
    report = sm.install_routes()            # writes only what changed on each switch
    sm.write_address_book("results/run/address_book.json")

Every per-switch step runs on all switches at once (one thread and one
P4Runtime client per switch). A switch that fails does not stop the others:
the step finishes everywhere it can and then raises `FabricError`, which
names every switch that failed and why; what was installed stays installed.

Routes are installed as `FabricIngress.dlid_route` entries (hdr.lrh.dlid
exact -> FabricIngress.forward(port)), or, when the pipeline has fast reroute
(an action of dlid_route taking two ports: `forward_frr(primary, backup)` of
p4src/include/reroute.p4), with the backup port of every route that has one.
The SM remembers what each switch holds
(read back from the switch the first time, so a restarted SM does not
reinstall a whole fabric) and writes only the difference: inserts for new
LIDs, modifies for changed ports, deletes for LIDs no longer routed.
"""

from __future__ import annotations

import json
import os
import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from controller import drop_reasons, program_constants
from controller.lids import LidMap
from controller.p4info import Action, P4Info, decode
from controller.p4runtime_client import SwitchConnection
from controller.program_layout import LayoutError, layout
from controller.routing import Routes, RoutingEngine
from controller.routing.backup import backup_routes
from controller.routing.diagnostics import VlLayeringError, assign_vls, deadlock_free
from controller.routing.graph import SwitchGraph
from controller.routing.minhop import MinHop
from controller.routing.notification import notification_check
from topologies import link_names
from topologies.description import Fabric, Link

ROUTE_TABLE = "FabricIngress.dlid_route"
ROUTE_KEY = "hdr.lrh.dlid"
ROUTE_ACTION = "FabricIngress.forward"
DROP_COUNTER = "FabricIngress.drop_counter"
DEFAULT_SL = 0
SL_TABLE = "FabricIngress.sl_to_vl"  # hdr.lrh.sl exact -> set_vl(vl); default set_vl(0)
SL_KEY = "hdr.lrh.sl"
SL_ACTION = "FabricIngress.set_vl"
# fault notification (p4src/include/notify.p4): keyless, the SM sets the default action
NOTIFY_TABLE = "FabricIngress.notify_config"
NOTIFY_ACTION = "FabricIngress.set_notify"  # (ports: mask of switch ports, epoch, queue)
NOTIFY_EPOCHS = 0xFFFF  # epoch is 16 bits; 0 is the pipeline's "never written"
# Above p4runtime-shell's default (1, 0): an operator's shell is a read-only backup.
SM_ELECTION_ID = (2, 0)

T = TypeVar("T")

# what a switch holds for one DLID: (primary port, backup port or None)
RouteEntry = tuple[int, int | None]


def frr_action(info: P4Info) -> Action | None:
    """The fast-reroute action of dlid_route (two port parameters: primary, backup), if any."""
    table = info.table(ROUTE_TABLE)
    port_width = info.action(ROUTE_ACTION).param("port").bitwidth
    for action_id in table.action_ids:
        action = info.action(info.name(action_id))
        if len(action.params) == 2 and all(p.bitwidth == port_width for p in action.params):
            return action
    return None


class FabricError(Exception):
    """A step failed on some switches; `errors` maps switch name -> exception."""

    def __init__(self, step: str, errors: dict[str, Exception]) -> None:
        self.step = step
        self.errors = errors
        lines = "; ".join(f"{name}: {exc}" for name, exc in sorted(errors.items()))
        super().__init__(f"{step} failed on {len(errors)} switch(es): {lines}")


@dataclass(frozen=True)
class RouteChanges:
    """What one install wrote to one switch."""

    inserted: int
    modified: int
    deleted: int

    @property
    def writes(self) -> int:
        return self.inserted + self.modified + self.deleted


def connect_switches(fabric: Fabric, addresses: dict[str, str],
                     election_id: tuple[int, int] = SM_ELECTION_ID,
                     timeout: float = 10.0) -> dict[str, SwitchConnection]:
    """A primary connection to every switch at once (device ids from the fabric).

    Raises FabricError naming every switch that could not be reached or held;
    the connections that did succeed are closed first.
    """
    connections: dict[str, SwitchConnection] = {}
    errors: dict[str, Exception] = {}

    def connect(name: str) -> SwitchConnection:
        return SwitchConnection(name, addresses[name], fabric.node(name).device_id,
                                election_id, timeout)

    with ThreadPoolExecutor(max_workers=max(1, min(32, len(addresses))),
                            thread_name_prefix="sm-connect") as pool:
        futures = {name: pool.submit(connect, name) for name in sorted(addresses)}
        for name, future in futures.items():
            try:
                connections[name] = future.result()
            except Exception as exc:  # noqa: BLE001 -- reported per switch below
                errors[name] = exc
    if errors:
        for conn in connections.values():
            conn.close()
        raise FabricError("connect", errors)
    return connections


def _table_image(routes, backups) -> tuple[bytes, bytes] | None:
    """Primary and backup LFT bytes of one switch, when both are ForwardingTables."""
    primary = getattr(routes, "ports", None)
    spare = getattr(backups, "ports", None) if backups else b""
    if primary is None or spare is None:
        return None
    return bytes(primary), bytes(spare)


def read_route_entries(conn: SwitchConnection) -> dict[int, RouteEntry]:
    """{dlid: (primary, backup or None)} as one switch's dlid_route holds it now."""
    info = conn.p4info
    forward = info.action(ROUTE_ACTION)
    frr = frr_action(info)
    routes: dict[int, RouteEntry] = {}
    for entry in conn.read_table_entries(ROUTE_TABLE):
        dlid = decode(entry.match[0].exact.value)
        call = entry.action.action
        values = {p.param_id: decode(p.value) for p in call.params}
        if call.action_id == forward.id:
            routes[dlid] = (values[forward.param("port").id], None)
        elif frr is not None and call.action_id == frr.id:
            routes[dlid] = (values[frr.params[0].id], values[frr.params[1].id])
    return routes


def read_drop_counters(conn: SwitchConnection, ports: list[int],
                       reasons: drop_reasons.DropReasons | None = None
                       ) -> dict[tuple[int, str], tuple[int, int]]:
    """{(port, reason): (packets, bytes)}, non-zero cells of one switch's drop counter,
    named by `reasons` (the pushed program's; fabric.p4's without).

    Only the given (wired) ports' cells: a wildcard read would move every
    port x reason cell of a 512-port counter."""
    reasons = reasons or drop_reasons.load()
    indices = [port * reasons.per_port + r for port in ports for r in range(reasons.per_port)]
    cells = conn.read_counters(DROP_COUNTER, indices=indices)
    return {reasons.split(index): value for index, value in sorted(cells.items())
            if value != (0, 0)}


def _drop_reasons(p4info_path: Path | str, bmv2_json_path: Path | str
                  ) -> drop_reasons.DropReasons:
    """The drop reasons of the program being pushed (controller/drop_reasons.py)."""
    try:
        per_port = layout(P4Info.from_file(p4info_path)).drop_reasons
    except (LayoutError, KeyError):  # not the fabric layout: headers.p4's block size
        per_port = None
    return drop_reasons.of_program(json.loads(Path(bmv2_json_path).read_text()), per_port)


class SubnetManager:
    def __init__(self, fabric: Fabric, connections: dict[str, SwitchConnection],
                 engine: RoutingEngine | None = None, lid_map: LidMap | None = None,
                 host_macs: dict[str, str] | None = None, fast_reroute: bool = True,
                 vl_layering: bool = True, notification: bool = True,
                 notify_priority: int = 0) -> None:
        missing = {s.name for s in fabric.switches} - set(connections)
        if missing:
            raise ValueError(f"no P4Runtime connection for switch(es) {sorted(missing)}")
        self.fabric = fabric
        self.connections = connections
        self.engine = engine or MinHop()
        self.lid_map = lid_map or LidMap()
        self.host_macs = host_macs or {}
        self.lids: dict[str, int] = {}
        self.fast_reroute = fast_reroute  # install backups where the pipeline can use them
        # A global reroute starts this long after the port event was detected: distributed
        # routing's convergence (the RoCE/BGP stand-in; scenario convergence_delay_s).
        self.convergence_delay_s = 0.0
        self.vl_layering = vl_layering  # False: leave a cyclic dependency in place (to show it)
        self.routes: Routes = {}
        self.backups: Routes = {}
        self.vl_of: dict[int, int] = {}  # dlid -> VL (= SL) where the routes need layering
        self.deadlock_problem = ""  # a cycle VL layering could not break
        # fault notification upstream (with fast_reroute): on while the routes and backups
        # pass notification_check; `notify_problem` says why it is off
        self.notification = notification and fast_reroute
        self.notify_problem = ""
        self.notify_epoch = 0  # bumped by every install_notification
        # The egress queue of NOTIFY frames: 7 (ahead of data) where every switch was
        # started with 8 priority queues, 0 where it has one (bmv2 drops a priority
        # beyond its queues).
        if not 0 <= notify_priority <= 7:
            raise ValueError(f"notify_priority must be 0-7, got {notify_priority}")
        self.notify_priority = notify_priority
        self._notify_groups: set[str] = set()  # switches holding the program's NOTIFY_GROUP
        self._installed: dict[str, dict[int, RouteEntry]] = {}  # what each switch holds
        self._images: dict[str, tuple[bytes, bytes] | None] = {}  # ... as LFT bytes
        self.failed_links: set[Link] = set()  # reported down by the agents
        self.timeline: list[dict] = []  # one record per port event (see handle_port_event)
        self.timeline_path: Path | None = None  # ... also appended here as JSON lines
        self._events: queue.Queue = queue.Queue()
        self._event_thread: threading.Thread | None = None
        self._install_lock = threading.Lock()
        # the last ordered install: per round, (ms, switches written) (sm_timeline)
        self.install_rounds: list[tuple[float, int]] = []
        self.sa = None  # the Subnet Administrator (controller/sa.py) once serve_sa() started it
        self.drop_reasons: drop_reasons.DropReasons | None = None  # the pushed program's
        # ... and its constants (CPU port, clone session base, notify group)
        self.constants: program_constants.ProgramConstants | None = None
        self.partitions = None  # controller.partitions.Partitions once partitions.conf is read

    # ------------------------------------------------------------------ fan-out
    def _on_all(self, step: str, work: Callable[[str, SwitchConnection], T],
                switches: list[str] | None = None) -> dict[str, T]:
        """Run work(name, conn) on every switch concurrently; raise FabricError at the end."""
        names = sorted(switches if switches is not None else self.connections)
        results: dict[str, T] = {}
        errors: dict[str, Exception] = {}
        with ThreadPoolExecutor(max_workers=max(1, min(32, len(names))),
                                thread_name_prefix=f"sm-{step}") as pool:
            futures = {name: pool.submit(work, name, self.connections[name]) for name in names}
            for name, future in futures.items():
                try:
                    results[name] = future.result()
                except Exception as exc:  # noqa: BLE001 -- reported per switch below
                    errors[name] = exc
        if errors:
            raise FabricError(step, errors)
        return results

    # ----------------------------------------------------------------- pipeline
    def push_pipeline(self, p4info_path: Path | str, bmv2_json_path: Path | str) -> None:
        """SetForwardingPipelineConfig on every switch; forgets what they held."""
        def push(name: str, conn: SwitchConnection) -> None:
            conn.set_pipeline(p4info_path, bmv2_json_path)
            self._notify_groups.discard(name)
            self._installed[name] = {}
            self._images.pop(name, None)

        self._on_all("pipeline push", push)
        self.drop_reasons = _drop_reasons(p4info_path, bmv2_json_path)
        self.constants = program_constants.from_files(p4info_path, bmv2_json_path)

    def provision_pipelines(self, p4info_path: Path | str, bmv2_json_path: Path | str) -> dict:
        """The acceptance variant of push_pipeline (controller/acceptance.py): the intended
        program, with its version cookie, on every switch that runs none; every switch's
        program read back and compared. {switch: PipelineCheck}; raises nothing."""
        from controller.acceptance import check_pipelines, program

        checks = check_pipelines(self.connections, program(p4info_path, bmv2_json_path))
        for name, check in checks.items():
            if check.pushed:
                self._installed[name] = {}
                self._images.pop(name, None)
        self.drop_reasons = _drop_reasons(p4info_path, bmv2_json_path)
        self.constants = program_constants.from_files(p4info_path, bmv2_json_path)
        return checks

    def discover_cabling(self, quiet: float = 0.3) -> list:
        """Probe every switch port of the intended fabric; one CableFinding per link that
        is not cabled as intended (controller/acceptance.py), [] when all are."""
        from controller.acceptance import cabling_findings
        from controller.discovery import discover

        guids = {sw.name: sw.guid for sw in self.fabric.switches}
        ports = {sw.name: [p for p, _peer, _pp in self.fabric.neighbours(sw.name)]
                 for sw in self.fabric.switches}
        return cabling_findings(self.fabric, discover(self.connections, guids, ports,
                                                      quiet=quiet))

    # --------------------------------------------------------------------- LIDs
    def assign_lids(self, guid2lid_path: Path | str | None = None) -> dict[str, int]:
        """Node -> LID; with a path, the persistent guid -> LID map is (re)loaded from it."""
        if guid2lid_path is not None:
            self.lid_map = LidMap(guid2lid_path)
        self.lids = self.lid_map.assign(self.fabric)
        return self.lids

    # ------------------------------------------------------------------- routes
    def compute_routes(self) -> Routes:
        if not self.lids:
            self.assign_lids()
        view = self.working_fabric()
        self.routes = self.engine.route(view, self.lids)
        self.backups = backup_routes(view, self.lids, self.routes, self.engine) \
            if self.fast_reroute else {}
        self._layer_vls(view)
        self._check_notification(view)
        return self.routes

    def _check_notification(self, view: Fabric) -> None:
        """Notification may combine any switch's primary and backup: allowed only while
        the CDG with all of them in it has no cycle (routing/notification.py)."""
        self.notify_problem = ""
        if not self.notification:
            return
        graph = SwitchGraph.from_fabric(view, self.lids)
        check = notification_check(graph, self.routes, self.backups, self.vl_of,
                                   coverage=False)
        if not check.deadlock_free:
            self.notify_problem = f"notification off: primary + backup choices close a " \
                                  f"cycle ({check.cycle})"

    @property
    def notifying(self) -> bool:
        """Fault notification is on for the routes computed last."""
        return self.notification and not self.notify_problem

    def install_notification(self) -> int:
        """notify_config on every switch whose pipeline has it: its switch-to-switch ports
        (none while notification is off) and a new route epoch, which retires every
        record of a NOTIFY taken before: the routes just installed replace the patches.
        Returns the epoch."""
        self.notify_epoch = self.notify_epoch % NOTIFY_EPOCHS + 1
        switches = {sw.name for sw in self.fabric.switches}

        def install(name: str, conn: SwitchConnection) -> None:
            info = conn.p4info
            try:
                info.table(NOTIFY_TABLE)
            except KeyError:
                return
            ports = sorted(port for port, peer, _pp in self.fabric.neighbours(name)
                           if peer in switches) if self.notifying else []
            if ports and name not in self._notify_groups:
                self._write_notify_group(name, conn, ports)
            entry = info.table_entry(NOTIFY_TABLE, {}, NOTIFY_ACTION,
                                     {"ports": sum(1 << p for p in ports),
                                      "epoch": self.notify_epoch,
                                      "queue": self.notify_priority})
            entry.is_default_action = True
            conn.write([conn.modify(entry)])

        self._on_all("notify_config", install)
        return self.notify_epoch

    def _layer_vls(self, view: Fabric) -> None:
        """Spread destinations over VLs when the routes have a cyclic channel dependency
        (engines that promise freedom, `deadlock_free = True`, are not checked)."""
        self.vl_of, self.deadlock_problem = {}, ""
        if getattr(self.engine, "deadlock_free", False):
            return
        graph = SwitchGraph.from_fabric(view, self.lids)
        ok, cycle = deadlock_free(graph, self.routes)
        if ok:
            return
        if not self.vl_layering:
            self.deadlock_problem = f"{cycle}; VL layering turned off"
            return
        try:
            # as many VLs as the pushed program classifies (offline: fabric.p4's 8)
            self.vl_of = assign_vls(graph, self.routes, *(
                [self.constants.num_classes] if self.constants is not None else []))
        except VlLayeringError as exc:
            self.deadlock_problem = f"{cycle}; {exc}"

    def install_sl_to_vl(self) -> None:
        """SL n -> VL n for every VL the layering uses beyond VL 0, on every switch whose
        pipeline has the sl_to_vl table (inserting only the missing entries)."""
        wanted = sorted(set(self.vl_of.values()) - {0})

        def install(name: str, conn: SwitchConnection) -> None:
            info = conn.p4info
            try:
                table = info.table(SL_TABLE)
            except KeyError:
                return
            have = {decode(e.match[0].exact.value) for e in conn.read_table_entries(table.name)}
            conn.write([conn.insert(info.table_entry(SL_TABLE, {SL_KEY: vl}, SL_ACTION,
                                                     {"vl": vl}))
                        for vl in wanted if vl not in have])

        if wanted:
            self._on_all("sl_to_vl install", install)

    def working_fabric(self) -> Fabric:
        """The fabric without the links the agents reported down."""
        if not self.failed_links:
            return self.fabric
        return Fabric(self.fabric.name, self.fabric.nodes,
                      tuple(lk for lk in self.fabric.links if lk not in self.failed_links))

    def install_routes(self, routes: Routes | None = None, backups: Routes | None = None,
                       ordered: bool = False) -> dict[str, RouteChanges]:
        """Make every switch's dlid_route equal `routes` (computed when None, with their
        backups), writing diffs; backups go in only where the pipeline has forward_frr.

        `ordered` (a reroute under traffic): entries are written in rounds, nearest to
        their destination first, so that a switch only ever points at a next hop that
        already holds its final route. Written all at once, a switch with the new route
        and its neighbour with the old one can bounce frames between them; on a lossless
        fabric such a transient loop fills both buffers and never drains (a deadlock)."""
        if routes is None:
            routes = self.compute_routes()
            backups = self.backups
        backups = backups or {}
        if ordered:
            rounds = self._install_rounds(routes)
            changes: dict[str, RouteChanges] = {}
            self.install_rounds = []
            for i, only in enumerate(rounds):
                last = i == len(rounds) - 1
                started = time.perf_counter()
                done = self._install_routes(routes, backups, only, final=last)
                self.install_rounds.append((round((time.perf_counter() - started) * 1e3, 3),
                                            sum(1 for c in done.values() if c.writes)))
                for name, c in done.items():
                    prev = changes.get(name, RouteChanges(0, 0, 0))
                    changes[name] = RouteChanges(prev.inserted + c.inserted,
                                                 prev.modified + c.modified,
                                                 prev.deleted + c.deleted)
            return changes
        return self._install_routes(routes, backups)

    def _install_rounds(self, routes: Routes) -> list[dict[str, set[int]]]:
        """{switch: dlids} per round, by the number of switches a frame still crosses
        from that switch to the destination on `routes` (loops and dead ends last);
        the last round also deletes and is always present."""
        switches = {sw.name for sw in self.fabric.switches}
        peer = {name: {port: p for port, p, _pp in self.fabric.neighbours(name)}
                for name in switches}
        by_depth: dict[int, dict[str, set[int]]] = {}
        for name, table in routes.items():
            for dlid in table:
                hops, here = 1, name
                while hops <= len(switches):
                    nxt = peer.get(here, {}).get(routes.get(here, {}).get(dlid))
                    if nxt not in switches:
                        break
                    hops, here = hops + 1, nxt
                by_depth.setdefault(hops, {}).setdefault(name, set()).add(dlid)
        rounds = [by_depth[d] for d in sorted(by_depth)]
        return rounds or [{}]

    def _install_routes(self, routes: Routes, backups: Routes,
                        only: dict[str, set[int]] | None = None, final: bool = True
                        ) -> dict[str, RouteChanges]:
        """One write per switch: the entries of `only` (all when None); with `final`,
        also the deletions, and the switch's table is then taken as installed."""
        def install(name: str, conn: SwitchConnection) -> RouteChanges:
            have = self._installed.get(name)
            info = conn.p4info
            frr = frr_action(info) if self.fast_reroute else None
            spare = backups.get(name, {}) if frr else {}
            # a switch whose tables did not change at all costs one bytes comparison
            image = _table_image(routes.get(name, {}), spare)
            if have is not None and image is not None and self._images.get(name) == image:
                return RouteChanges(0, 0, 0)
            if have is None:
                have = self.read_route_entries(name)
            have = dict(have)
            mine = None if only is None else only.get(name, set())
            want: dict[int, RouteEntry] = {}
            for dlid, port in routes.get(name, {}).items():
                backup = spare.get(dlid)
                want[dlid] = (port, backup if backup != port else None)
            updates, counts = [], [0, 0, 0]
            for dlid, (port, backup) in sorted(want.items()):
                if mine is not None and dlid not in mine:
                    continue
                if dlid not in have or have[dlid] != (port, backup):
                    if backup is None:
                        entry = info.table_entry(ROUTE_TABLE, {ROUTE_KEY: dlid}, ROUTE_ACTION,
                                                 {"port": port})
                    else:
                        primary_param, backup_param = (p.name for p in frr.params)
                        entry = info.table_entry(ROUTE_TABLE, {ROUTE_KEY: dlid}, frr.name,
                                                 {primary_param: port, backup_param: backup})
                    updates.append(conn.insert(entry) if dlid not in have else conn.modify(entry))
                    counts[0 if dlid not in have else 1] += 1
            for dlid in sorted(set(have) - set(want)) if final else ():
                updates.append(conn.delete(info.table_entry(ROUTE_TABLE, {ROUTE_KEY: dlid})))
                counts[2] += 1
            try:
                if updates:
                    conn.write(updates)
            except Exception:
                # some updates may have landed: read the switch's table next time
                self._installed.pop(name, None)
                raise
            if final:
                self._installed[name] = want
                self._images[name] = image
            else:
                have.update({d: e for d, e in want.items() if mine is None or d in mine})
                self._installed[name] = have
            return RouteChanges(*counts)

        with self._install_lock:
            return self._on_all("route install", install)

    def read_routes(self, switch: str) -> dict[int, int]:
        """{dlid: primary port} as the switch's dlid_route holds it now."""
        return {dlid: port for dlid, (port, _backup) in self.read_route_entries(switch).items()}

    def read_route_entries(self, switch: str) -> dict[int, RouteEntry]:
        """{dlid: (primary, backup or None)} as the switch's dlid_route holds it now."""
        return read_route_entries(self.connections[switch])

    def _constants(self) -> program_constants.ProgramConstants:
        if self.constants is None:
            raise RuntimeError("the program's constants are unknown: push the pipeline "
                               "(push_pipeline / provision_pipelines) first")
        return self.constants

    def _write_notify_group(self, name: str, conn: SwitchConnection, ports: list[int]) -> None:
        """The program's NOTIFY_GROUP = `ports` on one switch (INSERT, or MODIFY where it
        exists: an SM restarted over a running fabric)."""
        from p4.v1 import p4runtime_pb2

        def update(kind: int) -> p4runtime_pb2.Update:
            u = p4runtime_pb2.Update(type=kind)
            group = u.entity.packet_replication_engine_entry.multicast_group_entry
            group.multicast_group_id = self._constants().notify_group
            for port in ports:
                group.replicas.add(egress_port=port, instance=1)
            return u

        try:
            conn.write([update(p4runtime_pb2.Update.INSERT)])
        except Exception:  # noqa: BLE001 -- already there: replace it
            conn.write([update(p4runtime_pb2.Update.MODIFY)])
        self._notify_groups.add(name)

    # ------------------------------------------------------------- link events
    def link_at(self, switch: str, port: int) -> Link | None:
        for link in self.fabric.links:
            if (link.a, link.a_port) == (switch, port) or (link.b, link.b_port) == (switch, port):
                return link
        return None

    def report(self, event) -> None:
        """An agent's PortEvent (thread-safe; handled in order by the event thread)."""
        self._events.put(event)

    def serve_reports(self, address: str):
        """The report socket agent processes report to (a unix socket path or loopback
        HOST:PORT; controller/port_reports.py): every PortEvent goes to `report`.
        The caller closes the returned endpoint."""
        from controller.port_reports import ReportEndpoint

        return ReportEndpoint(address, self.report).start()

    def start_event_loop(self, timeline_path: Path | str | None = None) -> None:
        if timeline_path is not None:
            self.timeline_path = Path(timeline_path)
            self.timeline_path.parent.mkdir(parents=True, exist_ok=True)
        self._event_thread = threading.Thread(target=self._serve_events, daemon=True,
                                              name="sm-events")
        self._event_thread.start()

    def stop_event_loop(self) -> None:
        if self._event_thread is not None:
            self._events.put(None)
            self._event_thread.join(timeout=10)
            self._event_thread = None

    def _serve_events(self) -> None:
        while (event := self._events.get()) is not None:
            self.handle_port_event(event)

    def handle_port_event(self, event) -> dict:
        """Global reroute for one agent report: the fabric without (or again with) the link,
        routes and backups recomputed, only the changed entries installed. Returns and logs
        the event's timeline (times in ns since the epoch, durations in ms)."""
        received_ns = time.time_ns()
        record = {"event": "port_up" if event.up else "port_down", "switch": event.switch,
                  "port": event.port, "detected_ns": event.detected_ns,
                  "switchover_ns": event.switchover_ns, "sm_received_ns": received_ns}
        if event.error:
            record["switchover_error"] = event.error
        if event.switchover_ns:
            record["switchover_ms"] = round((event.switchover_ns - event.detected_ns) / 1e6, 3)
        link = self.link_at(event.switch, event.port)
        if link is None:
            record["error"] = f"no link at {event.switch}:{event.port} in {self.fabric.name}"
            return self._log(record)
        record["link"] = link_names.port_pair(link)
        known_down = link in self.failed_links
        if known_down != event.up:  # the other end already told us
            record["note"] = "already known"
            return self._log(record)
        if event.up:
            self.failed_links.discard(link)
        else:
            self.failed_links.add(link)
        if self.convergence_delay_s > 0:
            record["convergence_delay_s"] = self.convergence_delay_s
            wait_s = (event.detected_ns - time.time_ns()) / 1e9 + self.convergence_delay_s
            if wait_s > 0:
                time.sleep(wait_s)
            received_ns = time.time_ns()  # recompute_ms: from the end of the wait
        try:
            self.compute_routes()
            record["recompute_done_ns"] = time.time_ns()
            self.install_sl_to_vl()  # a VL the new layering uses for the first time
            changes = self.install_routes(self.routes, self.backups, ordered=True)
            record["entries_written"] = sum(c.writes for c in changes.values())
            record["install_rounds"] = [list(r) for r in self.install_rounds]
            record["notify_epoch"] = self.install_notification()  # the patches retire
        except FabricError as exc:
            record["error"] = str(exc)
        except Exception as exc:  # noqa: BLE001 -- the SM keeps serving the fabric
            record["error"] = f"{type(exc).__name__}: {exc}"
        record["install_done_ns"] = time.time_ns()
        if "recompute_done_ns" in record:
            record["recompute_ms"] = round((record["recompute_done_ns"] - received_ns) / 1e6, 3)
            record["install_ms"] = round(
                (record["install_done_ns"] - record["recompute_done_ns"]) / 1e6, 3)
        record["global_reroute_ms"] = round((record["install_done_ns"] - event.detected_ns)
                                            / 1e6, 3)
        if self.sa is not None:  # hosts learn changed LIDs/SLs (REPORT notices)
            record.update(self.sa.publish())
        return self._log(record)

    def _log(self, record: dict) -> dict:
        self.timeline.append(record)
        if self.timeline_path is not None:
            with self.timeline_path.open("a") as f:
                f.write(json.dumps(record) + "\n")
        return record

    # ------------------------------------------------------------- address book
    def address_book(self) -> dict:
        """host -> {lid, sl, mac}: what a host's traffic agent needs to address a peer."""
        if not self.lids:
            self.assign_lids()
        hosts = {}
        for host in sorted(self.fabric.hosts, key=lambda n: self.lids[n.name]):
            lid = self.lids[host.name]
            hosts[host.name] = {"lid": lid, "sl": self.vl_of.get(lid, DEFAULT_SL),
                                "mac": self.host_macs.get(host.name), "guid": f"{host.guid:#018x}"}
        return {"fabric": self.fabric.name, "hosts": hosts}

    def write_address_book(self, path: Path | str) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(self.address_book(), indent=2) + "\n")
        os.replace(tmp, path)
        return path

    def serve_sa(self, log_path: Path | str | None = None):
        """Answer the hosts' in-band PathRecord queries from now on, and REPORT changed
        paths after every global reroute (controller/sa.py). Call after bring_up; the
        SA reads every switch's packet-ins, so discovery must not run meanwhile."""
        from controller.sa import SubnetAdministrator

        self.sa = SubnetAdministrator(self, log_path).start()
        return self.sa

    # ----------------------------------------------------------------- counters
    def read_drop_counters(self, switch: str) -> dict[tuple[int, str], tuple[int, int]]:
        """{(port, reason): (packets, bytes)} for every non-zero cell of the drop counter."""
        ports = [port for port, _peer, _peer_port in self.fabric.neighbours(switch)]
        return read_drop_counters(self.connections[switch], ports, self.drop_reasons)

    def close(self) -> None:
        """Close every switch connection (the switches keep their tables)."""
        self.stop_event_loop()
        if self.sa is not None:
            self.sa.stop()
        for conn in self.connections.values():
            conn.close()

    # -------------------------------------------------------------------- bring-up
    def bring_up(self, p4info_path: Path | str, bmv2_json_path: Path | str,
                 address_book_path: Path | str | None = None) -> dict[str, RouteChanges]:
        """Pipeline, LIDs, routes, address book: the SM's part of starting a run."""
        self.push_pipeline(p4info_path, bmv2_json_path)
        self.assign_lids()
        changes = self.install_routes()
        self.install_sl_to_vl()
        self.install_notification()
        if address_book_path is not None:
            self.write_address_book(address_book_path)
        return changes
