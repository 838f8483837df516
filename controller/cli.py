"""`fabriclab-sm`: the subnet manager from the command line.

    fabriclab-sm route TOPO [--engine minhop|updn|ftree] [--check] [--json]
                      [--extended-lids] [--dump-routes FILE]
        offline: LIDs and routes for a topology by name (`line:2`, `fattree:4`, ...)
        or `netfile:PATH`, with the figures a routing comparison needs.
    fabriclab-sm up TOPO --switch s1=127.0.0.1:9559 [--switch ...] --p4info P --bmv2-json J
                   [--guid2lid FILE] [--address-book FILE]
                   [--fc MODE [--hold-loops [PREFIX]] [--metadata FILE]]
        live: push the pipeline, assign LIDs and install routes on running switches;
        with --fc, their flow-control mode, and where held frames wait (one line per
        switch: a hold loop wired on this machine, on bmv2, or recirculation and why).
    fabriclab-sm serve TOPO --switch ... --p4info P --bmv2-json J [--engine E] [--sa]
                   --iface s1:2=s1-eth2 [--iface ...] [--timeline FILE]
                   [--web PORT] [--view-recording FILE]
        live: `up`, then a local agent per switch watching the listed interfaces
        (fast reroute) and the SM's global reroute, until SIGTERM/SIGINT; with --web,
        the live view on http://127.0.0.1:PORT/ (docs/liveview.md).
    fabriclab-sm discover TOPO --switch ... --p4info P [--links-only]
        live: PROBE every cable, print what was found and every difference from TOPO
        (exit 1 when there is one).
    fabriclab-sm drops TOPO --switch ... --p4info P
        live: non-zero drop counters as JSON {switch: [{port, reason, packets, bytes}]}.
    fabriclab-sm status TOPO --switch ... [--p4info P] [--timeout S] [--json]
        live, read-only: per switch reachable, pipeline, dlid_route / forward_frr entries,
        ports marked down, flow-control mode, where held frames wait (hold loop or
        recirculation), non-zero drops (exit 1 if any switch is unreachable or has no
        pipeline).
    fabriclab-sm routes TOPO DLID --switch ... [--p4info P] [--guid2lid F] [--json]
        live, read-only: the path a frame to DLID (a LID or a node name) takes from every
        switch, hop by hop through TOPO's cables (`s1:3 -> s4:1 -> h2`), and with each
        switch's backup port when its primary cable is down; loops and blackholes
        flagged (exit 1 when there is one).
    fabriclab-sm topology TOPO [--guid2lid F] [--json]
        offline: switches, hosts, cables with ports, and the LIDs the SM would assign.

The read-only subcommands (`status`, `routes`) open no StreamChannel, so they
never take part in mastership arbitration: they cannot become primary or
disturb a running SM (P4Runtime lets any client Read and
GetForwardingPipelineConfig). The P4Info comes from the switch itself unless
--p4info is given.

Errors print as one line `fabriclab-sm: error: ...`: exit 2 for input that
cannot be used (unknown topology or engine, malformed net-file, a fabric the
engine cannot route), 1 for anything else and for a failed `--check`.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time

from controller.lids import LidMap
from controller.routing import engine as routing_engine


class UsageError(Exception):
    """Input the CLI cannot use (unknown names, malformed files): exit status 2."""


def _build_fabric(spec: str):
    from topologies.generators import TopologyError, build

    try:
        return build(spec)
    except TopologyError as exc:
        raise UsageError(str(exc)) from None


def _engine(name: str):
    try:
        return routing_engine(name)
    except KeyError as exc:
        raise UsageError(exc.args[0]) from None


def cmd_route(args: argparse.Namespace) -> int:
    from controller.lids import LidSpaceExhausted, extended_lids
    from controller.routing import RoutingError

    fabric = _build_fabric(args.topology)
    engine = _engine(args.engine)
    try:
        lids = extended_lids(fabric) if args.extended_lids else LidMap().assign(fabric)
    except LidSpaceExhausted as exc:
        raise UsageError(f"{exc}; --extended-lids routes it anyway") from None
    start = time.perf_counter()
    try:
        routes = engine.route(fabric, lids)
    except RoutingError as exc:
        raise UsageError(str(exc)) from None
    seconds = time.perf_counter() - start
    entries = sum(len(t) for t in routes.values())
    summary = {
        "topology": fabric.name, "hosts": len(fabric.hosts), "switches": len(fabric.switches),
        "links": len(fabric.links), "engine": engine.name, "seconds": round(seconds, 6),
        "peak_memory_mb": None, "entries": entries,
        "unrouted_entries": len(routes) * (len(lids) - 1) - entries,
        "deadlock_free": None, "deadlock_free_on_one_vl": None, "vls_used": None,
        "max_link_load": None, "mean_link_load": None, "unreachable_pairs": None,
        "path_length_histogram": None, "backup_loop_free": None, "backup_coverage": None,
        "notify_deadlock_free": None, "notify_coverage": None,
    }
    failed = False
    if args.check:
        summary.update(check_routes(fabric, lids, engine, routes))
        failed = not (summary["deadlock_free"] and summary["backup_loop_free"]) or \
            summary["unreachable_pairs"] > 0
    summary["peak_memory_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    if args.dump_routes:
        with open(args.dump_routes, "w") as f:
            json.dump({"lids": lids, "routes": {name: dict(t) for name, t in routes.items()}},
                      f, indent=1)
    if args.json:
        print(json.dumps(summary))
    else:
        width = max(len(k) for k in summary)
        print("\n".join(f"{k:<{width}}  {v}" for k, v in summary.items() if v is not None))
    return 1 if failed else 0


def check_routes(fabric, lids: dict[str, int], engine, routes) -> dict:
    """The --check figures: deadlock (per VL, after VL layering), load, reachability,
    path lengths, backups under every single link failure."""
    from controller.routing.backup import backup_routes, single_failure_loops
    from controller.routing.diagnostics import VlLayeringError, analyse, assign_vls, deadlock_free
    from controller.routing.graph import SwitchGraph
    from controller.routing.notification import notification_check

    graph = SwitchGraph.from_fabric(fabric, lids)
    report = analyse(graph, routes, dependencies=False)
    one_vl, _cycle = deadlock_free(graph, routes)
    vls = None
    if one_vl:
        ok, vls_used = True, 1
    else:
        try:
            vls = assign_vls(graph, routes)
            ok, vls_used = deadlock_free(graph, routes, vls)[0], max(vls.values()) + 1
        except VlLayeringError:
            ok, vls_used = False, None
    backups = backup_routes(fabric, lids, routes, engine)
    failures = single_failure_loops(graph, routes, backups)
    notify = notification_check(graph, routes, backups,
                                vls if not one_vl and vls_used else None)
    return {
        "deadlock_free": ok, "deadlock_free_on_one_vl": one_vl, "vls_used": vls_used,
        "max_link_load": report.max_link_load,
        "mean_link_load": round(report.mean_link_load, 3),
        "unreachable_pairs": report.unreachable_pairs,
        "path_length_histogram": {str(k): v for k, v in report.path_length_histogram.items()},
        "backup_loop_free": failures.loop_free,
        "backup_coverage": round(failures.rerouted / failures.failures, 4)
        if failures.failures else None,
        # fault notification upstream: the CDG with every primary and backup choice, and
        # the share of single-failure cases it heals (the SM turns it off on a cycle)
        "notify_deadlock_free": notify.deadlock_free,
        "notify_coverage": round(notify.coverage, 4) if notify.coverage is not None else None,
    }


def _connect(args: argparse.Namespace):
    """(fabric, connections) for the live subcommands."""
    from controller.sm import connect_switches

    fabric = _build_fabric(args.topology)
    return fabric, connect_switches(fabric, _addresses(args, fabric))


def _addresses(args: argparse.Namespace, fabric) -> dict[str, str]:
    """{switch: HOST:PORT} from the --switch options, every name checked against TOPO."""
    switches = {s.name for s in fabric.switches}
    addresses = {}
    for spec in args.switch:
        name, sep, address = spec.partition("=")
        if not sep or not address or ":" not in address:
            raise UsageError(f"--switch {spec!r}: expected NAME=HOST:PORT")
        if name not in switches:
            raise UsageError(f"--switch {spec!r}: {fabric.name} has no switch {name!r}")
        addresses[name] = address
    return addresses


def cmd_up(args: argparse.Namespace) -> int:
    from controller import held_frames
    from controller.sm import SubnetManager

    if not args.fc and (args.hold_loops is not None or args.metadata):
        raise UsageError("--hold-loops and --metadata go with --fc (where flow control "
                         "holds frames)")
    fabric, connections = _connect(args)
    hold = None
    try:
        sm = SubnetManager(fabric, connections, engine=_engine(args.engine),
                           lid_map=LidMap(args.guid2lid))
        changes = sm.bring_up(args.p4info, args.bmv2_json, args.address_book)
        if args.fc:
            hold = held_frames.plan(sorted(connections), args.hold_loops, sm.constants)
            _set_flow_control(fabric, connections, args.fc, sm.constants, hold.switches)
    finally:
        for conn in connections.values():
            conn.close()
    for name, change in sorted(changes.items()):
        print(f"{name}: {change.inserted} inserted, {change.modified} modified, "
              f"{change.deleted} deleted")
    if hold is not None:
        held_frames.report(hold, asked=args.hold_loops is not None, flow_control=args.fc,
                           metadata=args.metadata)
    return 0


def _set_flow_control(fabric, connections, mode: str, constants,
                      hold_loops: frozenset[str] = frozenset()) -> None:
    """Every switch in `mode` with the default watermarks and credits (docs/controller.md);
    held frames round the loop on the switches in `hold_loops`."""
    from controller.bringup import configure_flow_control, fc_params
    from traffic.flow_control import (
        CREDIT_BUFFER,
        CREDIT_COALESCE,
        DEFAULT_FRAME_BYTES,
        PFC_HEADROOM,
        PFC_XOFF,
        PFC_XON,
        FlowControl,
    )

    try:
        flow_control = FlowControl(mode)
    except ValueError:
        raise UsageError(f"--fc {mode!r}: expected one of "
                         f"{', '.join(m.value for m in FlowControl)}") from None
    params = fc_params(flow_control, xoff=PFC_XOFF, xon=PFC_XON, headroom=PFC_HEADROOM,
                       credit_limit=CREDIT_BUFFER, credit_coalesce=CREDIT_COALESCE,
                       hoq_lifetime_us=0,
                       watchdog_detect_us=0, watchdog_restore_us=0)
    configure_flow_control(connections, fabric, params, DEFAULT_FRAME_BYTES, constants,
                           hold_loops)


def cmd_serve(args: argparse.Namespace) -> int:
    """Bring the fabric up, then run a local agent per switch and global reroute until
    SIGTERM/SIGINT; the timeline goes to --timeline as JSON lines."""
    import signal
    import threading

    from controller.agent import LocalAgent, connect_agent
    from controller.sm import SubnetManager

    fabric, connections = _connect(args)
    ifaces: dict[str, dict[str, int]] = {}
    for spec in args.iface:
        where, sep, ifname = spec.partition("=")
        switch, colon, port = where.partition(":")
        if not sep or not colon or not port.isdigit() or not ifname:
            raise UsageError(f"--iface {spec!r}: expected SWITCH:PORT=IFNAME")
        if switch not in connections:
            raise UsageError(f"--iface {spec!r}: switch {switch} has no --switch address")
        ifaces.setdefault(switch, {})[ifname] = int(port)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    sm = SubnetManager(fabric, connections, engine=_engine(args.engine),
                       lid_map=LidMap(args.guid2lid))
    agents: list[LocalAgent] = []
    view = None
    try:
        sm.bring_up(args.p4info, args.bmv2_json, args.address_book)
        sm.start_event_loop(args.timeline)
        if args.web is not None or args.view_recording:
            from controller.liveview import LiveView

            view = LiveView.start(sm, args.view_recording, args.web)
            if view.url:
                print(f"live view: {view.url}", flush=True)
        if args.sa:
            sm.serve_sa(args.sa_log)
        for switch, ports in sorted(ifaces.items()):
            conn = connect_agent(switch, connections[switch].address,
                                 fabric.node(switch).device_id, args.p4info)
            agents.append(LocalAgent(switch, conn, ports, sm.report).start())
        print(f"serving {fabric.name}: {len(connections)} switches, "
              f"{sum(len(p) for p in ifaces.values())} watched ports", flush=True)
        stop.wait()
    finally:
        if view is not None:
            view.stop()
        for agent in agents:
            agent.stop()
            agent.conn.close()
        sm.close()
    return 0


def cmd_discover(args: argparse.Namespace) -> int:
    from controller.discovery import compare, discover

    fabric, connections = _connect(args)
    try:
        for conn in connections.values():
            conn.use_p4info(args.p4info)
        ports = {name: [p for p, _, _ in fabric.neighbours(name)] for name in connections}
        found = discover(connections, {n: fabric.node(n).guid for n in connections}, ports,
                         quiet=args.quiet)
    finally:
        for conn in connections.values():
            conn.close()
    for link in sorted(found.links):
        print(f"link {link.sent} -> {link.received}")
    for host in found.hosts:
        print(f"host {host.guid:#x} at {host.attached}")
    problems = compare(fabric, found, check_hosts=not args.links_only)
    for problem in problems:
        print(f"PROBLEM {problem}")
    return 1 if problems else 0


def cmd_drops(args: argparse.Namespace) -> int:
    from controller.sm import SubnetManager

    fabric, connections = _connect(args)
    try:
        for conn in connections.values():
            conn.use_p4info(args.p4info)
        sm = SubnetManager(fabric, connections)
        drops = {name: sm.read_drop_counters(name) for name in sorted(connections)}
    finally:
        for conn in connections.values():
            conn.close()
    print(json.dumps({name: [{"port": port, "reason": reason, "packets": pkts, "bytes": nbytes}
                             for (port, reason), (pkts, nbytes) in cells.items()]
                      for name, cells in drops.items()}))
    return 0


def _lids(fabric, guid2lid: str | None) -> dict[str, int]:
    """Node -> LID as the SM would assign them (from --guid2lid when given); the map file
    is only read, never created or changed."""
    from controller.lids import LidMapError, LidSpaceExhausted

    try:
        lid_map = LidMap(guid2lid)
        lid_map.path = None
        return lid_map.assign(fabric)
    except (LidMapError, LidSpaceExhausted) as exc:
        raise UsageError(str(exc)) from None


# ------------------------------------------------------- read-only views of a live fabric


def _observe(fabric, addresses: dict[str, str], p4info_path: str | None, timeout: float,
             work) -> dict:
    """work(name, observer) on every switch at once (observer.p4info = the switch's
    pipeline, None without one): {name: result, or the exception that stopped it}."""
    from concurrent.futures import ThreadPoolExecutor

    from controller.p4runtime_client import SwitchConnection

    def one(name: str):
        with SwitchConnection(name, addresses[name], fabric.node(name).device_id,
                              timeout=timeout, observe_only=True) as obs:
            if obs.fetch_pipeline() is not None and p4info_path:
                obs.use_p4info(p4info_path)
            return work(name, obs)

    results = {}
    with ThreadPoolExecutor(max_workers=max(1, min(32, len(addresses))),
                            thread_name_prefix="sm-observe") as pool:
        futures = {name: pool.submit(one, name) for name in sorted(addresses)}
        for name, future in futures.items():
            try:
                results[name] = future.result()
            except Exception as exc:  # noqa: BLE001 -- reported per switch
                results[name] = exc
    return results


def _no_pipeline(name: str) -> str:
    return f"{name}: no pipeline loaded"


def _read_or_none(read):
    """read(), or None when the pipeline has no such table/register/counter."""
    from controller.p4info import P4InfoError

    try:
        return read()
    except P4InfoError:
        return None


def _flow_control(obs) -> dict | None:
    """fc_config's default entry: {"mode": "PFC", param: value, ...}."""
    from p4.v1 import p4runtime_pb2

    from controller.flow_control import FC_CONFIG_TABLE, Mode
    from controller.p4info import decode

    query = p4runtime_pb2.TableEntry(table_id=obs.p4info.table(FC_CONFIG_TABLE).id,
                                     is_default_action=True)
    for entity in obs.read([p4runtime_pb2.Entity(table_entry=query)]):
        call = entity.table_entry.action.action
        if not call.action_id:
            return None
        action = obs.p4info.action(obs.p4info.name(call.action_id))
        names = {p.id: p.name for p in action.params}
        params = {names.get(p.param_id, str(p.param_id)): decode(p.value) for p in call.params}
        if "mode" in params:
            mode = params.pop("mode")
            params = {"mode": Mode(mode).name if mode in Mode._value2member_map_
                      else f"mode {mode}", **params}
        return {"action": action.name.rsplit(".", 1)[-1], **params}
    return None


def switch_status(fabric, name: str, obs) -> dict:
    """What `status` reports for one reachable switch (None: the pipeline lacks it)."""
    from controller import held_frames
    from controller.liveness import read_down_ports
    from controller.sm import read_drop_counters, read_route_entries

    status = {"switch": name, "address": obs.address, "reachable": True, "pipeline": None,
              "program": None, "tables": None, "routes": None, "frr_routes": None,
              "ports_down": None, "flow_control": None, "held_frames": None,
              "drops": None, "error": None}
    info = obs.p4info
    if info is None:
        status["error"] = "no pipeline loaded"
        return status
    pkg = info.proto.pkg_info
    status["program"] = pkg.name or None
    status["tables"] = len(info.proto.tables)
    status["pipeline"] = pkg.name or f"{pkg.arch or 'P4'} program with {status['tables']} tables"
    entries = _read_or_none(lambda: read_route_entries(obs))
    if entries is not None:
        status["routes"] = len(entries)
        status["frr_routes"] = sum(backup is not None for _p, backup in entries.values())
    ports = [port for port, _peer, _peer_port in fabric.neighbours(name)]
    down = _read_or_none(lambda: read_down_ports(obs))
    if down is not None:
        status["ports_down"] = sorted(down & set(ports))
    status["flow_control"] = _read_or_none(lambda: _flow_control(obs))
    status["held_frames"] = _read_or_none(lambda: held_frames.read(obs))
    drops = _read_or_none(lambda: read_drop_counters(obs, ports))
    if drops is not None:
        status["drops"] = [{"port": port, "reason": reason, "packets": pkts, "bytes": nbytes}
                           for (port, reason), (pkts, nbytes) in drops.items()]
    return status


def _status_line(s: dict) -> str:
    head = f"{s['switch']} ({s['address']}):"
    if not s["reachable"]:
        return f"{head} UNREACHABLE: {s['error']}"
    if s["pipeline"] is None:
        return f"{head} reachable, NO PIPELINE loaded"
    parts = [f"pipeline {s['pipeline']}"]
    na = "n/a (not in the pipeline)"
    parts.append(f"routes {s['routes']} (frr {s['frr_routes']})" if s["routes"] is not None
                 else f"routes {na}")
    down = s["ports_down"]
    parts.append("ports down " + (na if down is None else
                                  ",".join(map(str, down)) if down else "none"))
    fc = s["flow_control"]
    if fc is None:
        parts.append(f"flow control {na}")
    else:
        extra = ", ".join(f"{k}={v}" for k, v in fc.items()
                          if k not in ("action", "mode") and v)
        parts.append(f"flow control {fc.get('mode', fc['action'])}"
                     + (f" ({extra})" if extra else ""))
    if s.get("held_frames"):
        parts.append(f"held frames: {s['held_frames']}")
    drops = s["drops"]
    parts.append("drops " + (na if drops is None else "none" if not drops else
                             ", ".join(f"port {d['port']} {d['reason']} {d['packets']}"
                                       for d in drops)))
    return f"{head} " + "; ".join(parts)


def cmd_status(args: argparse.Namespace) -> int:
    fabric = _build_fabric(args.topology)
    addresses = _addresses(args, fabric)
    results = _observe(fabric, addresses, args.p4info, args.timeout,
                       lambda name, obs: switch_status(fabric, name, obs))
    report = []
    for name, result in results.items():
        if isinstance(result, Exception):
            result = {"switch": name, "address": addresses[name], "reachable": False,
                      "error": str(result).removeprefix(f"switch {name}: ")}
        report.append(result)
    if args.json:
        print(json.dumps({"fabric": fabric.name, "switches": report}))
    else:
        for s in report:
            print(_status_line(s))
    return 0 if all(s["reachable"] and s["pipeline"] for s in report) else 1


# ------------------------------------------------------------------------- paths


def trace(fabric, tables: dict[str, dict[int, tuple[int, int | None]]], dlid: int,
          start: str, destination: str | None, failed=None) -> tuple[list[str], str | None]:
    """The hops (`s1:3`, ..., then the destination's name) a frame to `dlid` takes from
    switch `start` following each switch's (primary, backup) entry through the fabric's
    cables, with the link `failed` down (its ends use their backups, as the data plane's
    port_down does). Returns (hops, problem): problem None when it reaches `destination`."""
    links = {}
    for link in fabric.links:
        links[(link.a, link.a_port)] = link
        links[(link.b, link.b_port)] = link
    hops: list[str] = []
    seen: set[str] = set()
    node = start
    while True:
        if node == destination:
            return hops + [node] if hops else [node], None
        if node in seen:
            return hops + [node], f"LOOP: back at {node}"
        seen.add(node)
        if node not in tables:
            return hops + [node], f"{node}'s table was not read"
        entry = tables[node].get(dlid)
        if entry is None:
            return hops + [node], f"BLACKHOLE: {node} has no route to {dlid}"
        primary, backup = entry
        port = primary
        if failed is not None and links.get((node, primary)) == failed:
            if backup is None:
                return hops + [node], f"BLACKHOLE: {node}:{primary} down and no backup"
            port = backup
        hops.append(f"{node}:{port}")
        link = links.get((node, port))
        if link is None:
            return hops, f"BLACKHOLE: no cable at {node}:{port}"
        if failed is not None and link == failed:
            return hops, f"BLACKHOLE: {node}:{port} is the failed cable"
        _own, peer, _peer_port = link.endpoint(node)
        if fabric.node(peer).kind.name == "HOST":
            hops.append(peer)
            return hops, None if peer == destination else f"WRONG HOST: delivered to {peer}"
        node = peer


def _dlid(text: str, lids: dict[str, int]) -> int:
    if text in lids:
        return lids[text]
    try:
        value = int(text, 0)
    except ValueError:
        raise UsageError(f"DLID {text!r}: expected a LID (e.g. 5, 0x5) or a node name") \
            from None
    if not 0 < value < 0x10000:
        raise UsageError(f"DLID {text!r}: LIDs are 1..0xFFFF")
    return value


def cmd_routes(args: argparse.Namespace) -> int:
    from controller.sm import read_route_entries

    fabric = _build_fabric(args.topology)
    addresses = _addresses(args, fabric)
    lids = _lids(fabric, args.guid2lid)
    dlid = _dlid(args.dlid, lids)
    destination = next((name for name, lid in lids.items() if lid == dlid), None)

    def read(name: str, obs):
        if obs.p4info is None:
            raise RuntimeError("no pipeline loaded")
        return read_route_entries(obs)

    results = _observe(fabric, addresses, args.p4info, args.timeout, read)
    tables = {n: t for n, t in results.items() if not isinstance(t, Exception)}
    unread = {n: str(e).removeprefix(f"switch {n}: ") for n, e in results.items()
              if isinstance(e, Exception)}
    links = {(lk.a, lk.a_port): lk for lk in fabric.links} | \
        {(lk.b, lk.b_port): lk for lk in fabric.links}
    paths, problems = [], 0
    for switch in sorted((s.name for s in fabric.switches), key=_node_key):
        if switch in unread or switch not in addresses:
            paths.append({"switch": switch, "hops": [], "problem":
                          f"not read: {unread.get(switch, 'no --switch address')}"})
            problems += switch in addresses
            continue
        hops, problem = trace(fabric, tables, dlid, switch, destination)
        path = {"switch": switch, "hops": hops, "problem": problem}
        entry = tables[switch].get(dlid)
        if entry is not None and entry[1] is not None and links.get((switch, entry[0])):
            failed = links[(switch, entry[0])]
            b_hops, b_problem = trace(fabric, tables, dlid, switch, destination, failed)
            path["backup"] = {"failed": f"{switch}:{entry[0]}", "hops": b_hops,
                              "problem": b_problem}
            problems += b_problem is not None
        problems += problem is not None
        paths.append(path)
    if args.json:
        print(json.dumps({"fabric": fabric.name, "dlid": dlid, "destination": destination,
                          "paths": paths}))
        return 1 if problems else 0
    print(f"DLID {dlid} ({destination or 'no node of ' + fabric.name + ' has this LID'})")
    for path in paths:
        line = " -> ".join(path["hops"])
        if path["problem"]:
            line = f"{line}  [{path['problem']}]" if line else path["problem"]
        print(f"{path['switch']}: {line}")
        backup = path.get("backup")
        if backup:
            line = " -> ".join(backup["hops"])
            if backup["problem"]:
                line += f"  [{backup['problem']}]"
            print(f"  with {backup['failed']} down: {line}")
    return 1 if problems else 0


# ---------------------------------------------------------------------- topology


def _node_key(name: str) -> tuple:
    head = name.rstrip("0123456789")
    return (head, int(name[len(head):] or -1), name)


def describe_topology(fabric, lids: dict[str, int]) -> dict:
    """The fabric as `topology --json` prints it."""
    switches = [{"name": s.name, "guid": f"{s.guid:#018x}", "device_id": s.device_id,
                 "tier": s.tier, "lid": lids.get(s.name), **({"label": s.label} if s.label else {}),
                 "ports": {str(port): f"{peer}:{peer_port}"
                           for port, peer, peer_port in fabric.neighbours(s.name)}}
                for s in sorted(fabric.switches, key=lambda n: _node_key(n.name))]
    hosts = []
    for h in sorted(fabric.hosts, key=lambda n: _node_key(n.name)):
        attached = fabric.neighbours(h.name)
        hosts.append({"name": h.name, "guid": f"{h.guid:#018x}", "lid": lids.get(h.name),
                      **({"label": h.label} if h.label else {}),
                      "switch": attached[0][1] if attached else None,
                      "port": attached[0][2] if attached else None})
    links = [{"a": lk.a, "a_port": lk.a_port, "b": lk.b, "b_port": lk.b_port,
              "rate_pps": lk.params.rate_pps, "delay_us": lk.params.delay_us,
              "buffer_pkts": lk.params.buffer_pkts} for lk in fabric.links]
    return {"fabric": fabric.name, "switches": switches, "hosts": hosts, "links": links}


def cmd_topology(args: argparse.Namespace) -> int:
    fabric = _build_fabric(args.topology)
    desc = describe_topology(fabric, _lids(fabric, args.guid2lid))
    if args.json:
        print(json.dumps(desc))
        return 0
    print(f"fabric {desc['fabric']}: {len(desc['switches'])} switches, "
          f"{len(desc['hosts'])} hosts, {len(desc['links'])} links")
    for s in desc["switches"]:
        ports = " ".join(f"{port}={peer}" for port, peer in s["ports"].items())
        print(f"switch {s['name']} lid {s['lid']} guid {s['guid']} device {s['device_id']} "
              f"tier {s['tier']}: {ports}")
    for h in desc["hosts"]:
        print(f"host {h['name']} lid {h['lid']} guid {h['guid']} at {h['switch']}:{h['port']}")
    for lk in desc["links"]:
        print(f"link {lk['a']}:{lk['a_port']} <-> {lk['b']}:{lk['b_port']}")
    return 0


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="fabriclab-sm", description="fabriclab subnet manager")
    sub = ap.add_subparsers(dest="command", required=True)
    _add_route(sub)
    _add_up(sub)
    _add_serve(sub)
    _add_observers(sub)
    return ap


def _add_route(sub) -> None:
    """`route`: LIDs and routes offline."""
    route = sub.add_parser("route", help="compute LIDs and routes offline")
    route.add_argument("topology", help="e.g. line:2, leafspine:2,2,2, fattree:4")
    route.add_argument("--engine", default="minhop", help="minhop, updn or ftree")
    route.add_argument("--check", action="store_true",
                       help="deadlock (per VL), load, reachability, backup loops; exit 1 on a "
                            "deadlock, an unreachable pair or a backup loop")
    route.add_argument("--extended-lids", action="store_true",
                       help="LIDs past 0xBFFF for fabrics larger than one subnet")
    route.add_argument("--json", action="store_true", help="one JSON object on stdout")
    route.add_argument("--dump-routes", metavar="FILE", help="write LIDs and tables as JSON")
    route.set_defaults(func=cmd_route)


def _add_up(sub) -> None:
    """`up`: configure running switches."""
    up = sub.add_parser("up", help="configure running switches over P4Runtime")
    up.add_argument("topology")
    up.add_argument("--switch", action="append", required=True, metavar="NAME=HOST:PORT")
    up.add_argument("--p4info", required=True)
    up.add_argument("--bmv2-json", required=True)
    up.add_argument("--engine", default="minhop")
    up.add_argument("--guid2lid", help="persistent guid -> LID map (created if missing)")
    up.add_argument("--address-book", help="write host -> LID/SL/MAC JSON here")
    up.add_argument("--fc", help="also set every switch's flow-control mode: lossy, pfc, credit")
    up.add_argument("--hold-loops", nargs="?", const="", metavar="PREFIX",
                    help="with --fc: bmv2 switches started with a hold loop (ports 508/509 on "
                         "PREFIXs1-eth508/-eth509, through a relay or a paced veth pair, "
                         "topologies/hold_loop.py): held frames go round it where it is wired "
                         "on this machine; elsewhere they recirculate, said on stderr")
    up.add_argument("--metadata", metavar="FILE",
                    help="with --fc: write where each switch's held frames wait (held_frames) "
                         "as JSON")
    up.set_defaults(func=cmd_up)


def _add_serve(sub) -> None:
    """`serve`: bring up, then reroute on carrier loss."""
    serve = sub.add_parser("serve", help="bring up, then fast + global reroute on carrier loss")
    serve.add_argument("topology")
    serve.add_argument("--switch", action="append", required=True, metavar="NAME=HOST:PORT")
    serve.add_argument("--p4info", required=True)
    serve.add_argument("--bmv2-json", required=True)
    serve.add_argument("--engine", default="minhop")
    serve.add_argument("--iface", action="append", default=[], metavar="SWITCH:PORT=IFNAME",
                       help="an interface the switch's local agent watches")
    serve.add_argument("--timeline", help="JSON lines, one per port event")
    serve.add_argument("--guid2lid", help="persistent guid -> LID map (created if missing)")
    serve.add_argument("--address-book", help="write host -> LID/SL/MAC JSON here")
    serve.add_argument("--sa", action="store_true",
                       help="answer the hosts' in-band PathRecord queries and REPORT changed "
                            "paths after a reroute (controller/sa.py)")
    serve.add_argument("--sa-log", help="with --sa: the answered queries as JSON lines")
    serve.add_argument("--web", type=int, metavar="PORT",
                       help="serve the live view on http://127.0.0.1:PORT/ (0: any free port)")
    serve.add_argument("--view-recording", metavar="FILE",
                       help="append the live view's samples and events here (liveview.jsonl: "
                            "a replay, controller/liveview/replay.py)")
    serve.set_defaults(func=cmd_serve)


def _add_observers(sub) -> None:
    """`discover`, `drops`, `status`, `routes` (read the running fabric) and `topology`
    (offline)."""
    disc = sub.add_parser("discover", help="probe every cable and compare with the topology")
    disc.add_argument("topology")
    disc.add_argument("--switch", action="append", required=True, metavar="NAME=HOST:PORT")
    disc.add_argument("--p4info", required=True, help="P4Info of the running pipeline")
    disc.add_argument("--quiet", type=float, default=0.5,
                      help="stop after this many seconds without a packet-in")
    disc.add_argument("--links-only", action="store_true", help="do not report silent hosts")
    disc.set_defaults(func=cmd_discover)
    drops = sub.add_parser("drops", help="non-zero drop counters per switch, port and reason")
    drops.add_argument("topology")
    drops.add_argument("--switch", action="append", required=True, metavar="NAME=HOST:PORT")
    drops.add_argument("--p4info", required=True, help="P4Info of the running pipeline")
    drops.set_defaults(func=cmd_drops)
    for name, helptext in (("status", "read-only: state of every listed switch"),
                           ("routes", "read-only: the path to one DLID from every switch")):
        p = sub.add_parser(name, help=helptext)
        p.add_argument("topology")
        if name == "routes":
            p.add_argument("dlid", help="a LID (5, 0x5) or a node name (h2)")
            p.add_argument("--guid2lid", help="the SM's guid -> LID map (read, never written)")
        p.add_argument("--switch", action="append", required=True, metavar="NAME=HOST:PORT")
        p.add_argument("--p4info", help="P4Info of the running pipeline (default: the "
                                        "switch's own, by GetForwardingPipelineConfig)")
        p.add_argument("--timeout", type=float, default=3.0,
                       help="seconds to wait for each switch (default 3)")
        p.add_argument("--json", action="store_true", help="one JSON object on stdout")
        p.set_defaults(func=cmd_status if name == "status" else cmd_routes)
    topo = sub.add_parser("topology", help="offline: switches, hosts, cables and LIDs")
    topo.add_argument("topology")
    topo.add_argument("--guid2lid", help="the SM's guid -> LID map (read, never written)")
    topo.add_argument("--json", action="store_true", help="one JSON object on stdout")
    topo.set_defaults(func=cmd_topology)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return args.func(args)
    except UsageError as exc:
        print(f"fabriclab-sm: error: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001 -- the CLI's one-line error contract
        print(f"fabriclab-sm: error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
