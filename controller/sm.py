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
exact -> FabricIngress.forward(port)). The SM remembers what each switch holds
(read back from the switch the first time, so a restarted SM does not
reinstall a whole fabric) and writes only the difference: inserts for new
LIDs, modifies for changed ports, deletes for LIDs no longer routed.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from controller import drop_reasons
from controller.lids import LidMap
from controller.p4info import decode
from controller.p4runtime_client import SwitchConnection
from controller.routing import Routes, RoutingEngine
from controller.routing.minhop import MinHop
from topologies.description import Fabric

ROUTE_TABLE = "FabricIngress.dlid_route"
ROUTE_KEY = "hdr.lrh.dlid"
ROUTE_ACTION = "FabricIngress.forward"
DROP_COUNTER = "FabricIngress.drop_counter"
DEFAULT_SL = 0
# Above p4runtime-shell's default (1, 0): an operator's shell is a read-only backup.
SM_ELECTION_ID = (2, 0)

T = TypeVar("T")


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


class SubnetManager:
    def __init__(self, fabric: Fabric, connections: dict[str, SwitchConnection],
                 engine: RoutingEngine | None = None, lid_map: LidMap | None = None,
                 host_macs: dict[str, str] | None = None) -> None:
        missing = {s.name for s in fabric.switches} - set(connections)
        if missing:
            raise ValueError(f"no P4Runtime connection for switch(es) {sorted(missing)}")
        self.fabric = fabric
        self.connections = connections
        self.engine = engine or MinHop()
        self.lid_map = lid_map or LidMap()
        self.host_macs = host_macs or {}
        self.lids: dict[str, int] = {}
        self.routes: Routes = {}
        self._installed: dict[str, dict[int, int]] = {}  # what each switch holds

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
            self._installed[name] = {}

        self._on_all("pipeline push", push)

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
        self.routes = self.engine.route(self.fabric, self.lids)
        return self.routes

    def install_routes(self, routes: Routes | None = None) -> dict[str, RouteChanges]:
        """Make every switch's dlid_route equal `routes` (computed when None), writing diffs."""
        if routes is None:
            routes = self.compute_routes()

        def install(name: str, conn: SwitchConnection) -> RouteChanges:
            have = self._installed.get(name)
            if have is None:
                have = self.read_routes(name)
            want = routes.get(name, {})
            info = conn.p4info
            updates, counts = [], [0, 0, 0]
            for dlid, port in sorted(want.items()):
                if dlid not in have or have[dlid] != port:
                    entry = info.table_entry(ROUTE_TABLE, {ROUTE_KEY: dlid}, ROUTE_ACTION,
                                             {"port": port})
                    updates.append(conn.insert(entry) if dlid not in have else conn.modify(entry))
                    counts[0 if dlid not in have else 1] += 1
            for dlid in sorted(set(have) - set(want)):
                updates.append(conn.delete(info.table_entry(ROUTE_TABLE, {ROUTE_KEY: dlid})))
                counts[2] += 1
            try:
                conn.write(updates)
            except Exception:
                # some updates may have landed: read the switch's table next time
                self._installed.pop(name, None)
                raise
            self._installed[name] = dict(want)
            return RouteChanges(*counts)

        return self._on_all("route install", install)

    def read_routes(self, switch: str) -> dict[int, int]:
        """{dlid: port} as the switch's dlid_route holds it now."""
        conn = self.connections[switch]
        info = conn.p4info
        forward = info.action(ROUTE_ACTION)
        port_id = forward.param("port").id
        routes = {}
        for entry in conn.read_table_entries(ROUTE_TABLE):
            dlid = decode(entry.match[0].exact.value)
            call = entry.action.action
            if call.action_id == forward.id:
                routes[dlid] = next(decode(p.value) for p in call.params if p.param_id == port_id)
        return routes

    # ------------------------------------------------------------- address book
    def address_book(self) -> dict:
        """host -> {lid, sl, mac}: what a host's traffic agent needs to address a peer."""
        if not self.lids:
            self.assign_lids()
        hosts = {}
        for host in sorted(self.fabric.hosts, key=lambda n: self.lids[n.name]):
            hosts[host.name] = {"lid": self.lids[host.name], "sl": DEFAULT_SL,
                                "mac": self.host_macs.get(host.name), "guid": f"{host.guid:#018x}"}
        return {"fabric": self.fabric.name, "hosts": hosts}

    def write_address_book(self, path: Path | str) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(self.address_book(), indent=2) + "\n")
        os.replace(tmp, path)
        return path

    # ----------------------------------------------------------------- counters
    def read_drop_counters(self, switch: str) -> dict[tuple[int, str], tuple[int, int]]:
        """{(port, reason): (packets, bytes)} for every non-zero cell of the drop counter."""
        reasons = drop_reasons.load()
        # Only the cells of the switch's wired ports: a wildcard read would move
        # every port x reason cell of a 512-port counter.
        ports = [port for port, _peer, _peer_port in self.fabric.neighbours(switch)]
        indices = [port * reasons.per_port + r for port in ports for r in range(reasons.per_port)]
        cells = self.connections[switch].read_counters(DROP_COUNTER, indices=indices)
        return {reasons.split(index): value for index, value in sorted(cells.items())
                if value != (0, 0)}

    def close(self) -> None:
        """Close every switch connection (the switches keep their tables)."""
        for conn in self.connections.values():
            conn.close()

    # -------------------------------------------------------------------- bring-up
    def bring_up(self, p4info_path: Path | str, bmv2_json_path: Path | str,
                 address_book_path: Path | str | None = None) -> dict[str, RouteChanges]:
        """Pipeline, LIDs, routes, address book: the SM's part of starting a run."""
        self.push_pipeline(p4info_path, bmv2_json_path)
        self.assign_lids()
        changes = self.install_routes()
        if address_book_path is not None:
            self.write_address_book(address_book_path)
        return changes
