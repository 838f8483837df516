"""`fabriclab-sm`: the subnet manager from the command line.

    fabriclab-sm route TOPO [--engine minhop] [--json] [--dump-routes FILE]
        offline: LIDs and routes for a topology by name (`line:2`, `fattree:4`, ...),
        with the figures a routing comparison needs.
    fabriclab-sm up TOPO --switch s1=127.0.0.1:9559 [--switch ...] --p4info P --bmv2-json J
                   [--guid2lid FILE] [--address-book FILE]
        live: push the pipeline, assign LIDs and install routes on running switches.
    fabriclab-sm discover TOPO --switch ... --p4info P [--links-only]
        live: PROBE every cable, print what was found and every difference from TOPO
        (exit 1 when there is one).
    fabriclab-sm drops TOPO --switch ... --p4info P
        live: non-zero drop counters as JSON {switch: [{port, reason, packets, bytes}]}.

Errors print as one line `fabriclab-sm: error: ...` and exit non-zero.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time

from controller.lids import LidMap
from controller.routing import engine as routing_engine


def _build_fabric(spec: str):
    try:
        from topologies.generators import build
    except ImportError as exc:
        raise SystemExit(f"fabriclab-sm: error: topologies.generators.build is not available "
                         f"({exc}); cannot build {spec!r}") from None
    return build(spec)


def cmd_route(args: argparse.Namespace) -> int:
    fabric = _build_fabric(args.topology)
    engine = routing_engine(args.engine)
    start = time.perf_counter()
    lids = LidMap().assign(fabric)
    routes = engine.route(fabric, lids)
    seconds = time.perf_counter() - start
    entries = sum(len(t) for t in routes.values())
    missing = len(routes) * (len(lids) - 1) - entries
    summary = {
        "topology": fabric.name, "hosts": len(fabric.hosts), "switches": len(fabric.switches),
        "links": len(fabric.links), "engine": engine.name, "seconds": round(seconds, 6),
        "peak_memory_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "entries": entries, "unrouted_entries": missing,
    }
    if args.dump_routes:
        with open(args.dump_routes, "w") as f:
            json.dump({"lids": lids, "routes": routes}, f, indent=1)
    if args.json:
        print(json.dumps(summary))
    else:
        width = max(len(k) for k in summary)
        print("\n".join(f"{k:<{width}}  {v}" for k, v in summary.items()))
    return 0


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
        sm = SubnetManager(fabric, connections, engine=routing_engine(args.engine),
                           lid_map=LidMap(args.guid2lid))
        changes = sm.bring_up(args.p4info, args.bmv2_json, args.address_book)
    finally:
        for conn in connections.values():
            conn.close()
    for name, change in sorted(changes.items()):
        print(f"{name}: {change.inserted} inserted, {change.modified} modified, "
              f"{change.deleted} deleted")
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
    route.add_argument("--engine", default="minhop")
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
    except Exception as exc:  # noqa: BLE001 -- the CLI's one-line error contract
        print(f"fabriclab-sm: error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
