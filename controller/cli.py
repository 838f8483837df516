"""`fabriclab-sm`: the subnet manager from the command line.

    fabriclab-sm route TOPO [--engine minhop|updn|ftree] [--check] [--json]
                      [--extended-lids] [--dump-routes FILE]
        offline: LIDs and routes for a topology by name (`line:2`, `fattree:4`, ...)
        or `netfile:PATH`, with the figures a routing comparison needs.
    fabriclab-sm up TOPO --switch s1=127.0.0.1:9559 [--switch ...] --p4info P --bmv2-json J
                   [--guid2lid FILE] [--address-book FILE]
        live: push the pipeline, assign LIDs and install routes on running switches.
    fabriclab-sm serve TOPO --switch ... --p4info P --bmv2-json J [--engine E]
                   --iface s1:2=s1-eth2 [--iface ...] [--timeline FILE]
        live: `up`, then a local agent per switch watching the listed interfaces
        (fast reroute) and the SM's global reroute, until SIGTERM/SIGINT.
    fabriclab-sm discover TOPO --switch ... --p4info P [--links-only]
        live: PROBE every cable, print what was found and every difference from TOPO
        (exit 1 when there is one).
    fabriclab-sm drops TOPO --switch ... --p4info P
        live: non-zero drop counters as JSON {switch: [{port, reason, packets, bytes}]}.

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

    graph = SwitchGraph.from_fabric(fabric, lids)
    report = analyse(graph, routes, dependencies=False)
    one_vl, _cycle = deadlock_free(graph, routes)
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
    return {
        "deadlock_free": ok, "deadlock_free_on_one_vl": one_vl, "vls_used": vls_used,
        "max_link_load": report.max_link_load,
        "mean_link_load": round(report.mean_link_load, 3),
        "unreachable_pairs": report.unreachable_pairs,
        "path_length_histogram": {str(k): v for k, v in report.path_length_histogram.items()},
        "backup_loop_free": failures.loop_free,
        "backup_coverage": round(failures.rerouted / failures.failures, 4)
        if failures.failures else None,
    }


def _connect(args: argparse.Namespace):
    """(fabric, connections) for the live subcommands."""
    from controller.sm import connect_switches

    fabric = _build_fabric(args.topology)
    addresses = {}
    for spec in args.switch:
        name, sep, address = spec.partition("=")
        if not sep or not address:
            raise ValueError(f"--switch {spec!r}: expected NAME=HOST:PORT")
        fabric.node(name)  # an unknown switch name fails here, by name
        addresses[name] = address
    return fabric, connect_switches(fabric, addresses)


def cmd_up(args: argparse.Namespace) -> int:
    from controller.sm import SubnetManager

    fabric, connections = _connect(args)
    try:
        sm = SubnetManager(fabric, connections, engine=_engine(args.engine),
                           lid_map=LidMap(args.guid2lid))
        changes = sm.bring_up(args.p4info, args.bmv2_json, args.address_book)
    finally:
        for conn in connections.values():
            conn.close()
    for name, change in sorted(changes.items()):
        print(f"{name}: {change.inserted} inserted, {change.modified} modified, "
              f"{change.deleted} deleted")
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    """Bring the fabric up, then run a local agent per switch and global reroute until
    SIGTERM/SIGINT; the timeline goes to --timeline as JSON lines."""
    import signal
    import threading

    from controller.agent import AGENT_ROLE, LocalAgent
    from controller.p4runtime_client import SwitchConnection
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
    try:
        sm.bring_up(args.p4info, args.bmv2_json, args.address_book)
        sm.start_event_loop(args.timeline)
        for switch, ports in sorted(ifaces.items()):
            conn = SwitchConnection(f"{switch}-agent", connections[switch].address,
                                    fabric.node(switch).device_id, (1, 0), role=AGENT_ROLE)
            conn.use_p4info(args.p4info)
            agents.append(LocalAgent(switch, conn, ports, sm.report).start())
        print(f"serving {fabric.name}: {len(connections)} switches, "
              f"{sum(len(p) for p in ifaces.values())} watched ports", flush=True)
        stop.wait()
    finally:
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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="fabriclab-sm", description="fabriclab subnet manager")
    sub = ap.add_subparsers(dest="command", required=True)
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
    up = sub.add_parser("up", help="configure running switches over P4Runtime")
    up.add_argument("topology")
    up.add_argument("--switch", action="append", required=True, metavar="NAME=HOST:PORT")
    up.add_argument("--p4info", required=True)
    up.add_argument("--bmv2-json", required=True)
    up.add_argument("--engine", default="minhop")
    up.add_argument("--guid2lid", help="persistent guid -> LID map (created if missing)")
    up.add_argument("--address-book", help="write host -> LID/SL/MAC JSON here")
    up.set_defaults(func=cmd_up)
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
    serve.set_defaults(func=cmd_serve)
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
    args = ap.parse_args(argv)
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
