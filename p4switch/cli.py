"""`fabriclab-switch`: the embedded switch with simple_switch_grpc's command line.

    fabriclab-switch [--device-id N] -i 1@veth1 -i 2@veth2 [--cpu-port 510]
                     [--grpc-server-addr 0.0.0.0:9559] [--log-console | --log-file F]
                     [--pcap DIR] [--priority-queues N]
                     [--port-params 1:rate_pps=1000,delay_us=50,depth=64]
                     [--switch-interval-us 500] [--control-rt-priority 10]
                     [--control-nice -10]
                     (--no-p4 | program.json)

A `--` separating target options (as simple_switch_grpc wants them) is
accepted and ignored. `--port-params` is our extension: per port egress
rate_pps, rate_bps, delay_us (propagation delay), depth (queue depth in
packets) and loss (the fraction of frames the port's cable loses: an emulated
lossy cable); it may be repeated. Errors (missing interface, bad JSON, gRPC
address taken) are one line on stderr and exit status 1; SIGTERM or SIGINT
stop the switch cleanly with status 0.

`--switch-interval-us` (the GIL switch interval), `--control-rt-priority`
(SCHED_FIFO for the P4Runtime and other control threads; 0: none) and
`--control-nice` (their nice value where real-time is off or refused; the
data-plane thread keeps the process's scheduling) make a P4Runtime write wait
less behind the packet loop (p4switch/control_priority.py). Where the OS
refuses (no CAP_SYS_NICE) the switch says so in one note line on stderr and
runs as before.
"""

from __future__ import annotations

import argparse
import json
import signal
import socket
import sys
import threading

from p4switch.control_priority import (
    DEFAULT_CONTROL_NICE,
    DEFAULT_CONTROL_RT_PRIORITY,
    DEFAULT_SWITCH_INTERVAL_US,
    ControlPriorityError,
    set_switch_interval,
    set_thread_nice,
    set_thread_realtime,
)
from p4switch.ports import PortError
from p4switch.program import ProgramError
from p4switch.switch import Switch

PORT_PARAM_KEYS = {"rate_pps": float, "rate_bps": float, "delay_us": float, "depth": int,
                   "loss": float}


class UsageError(ValueError):
    pass


def parse_interface(spec: str) -> tuple[int, str]:
    port, sep, iface = spec.partition("@")
    if not sep or not port.isdigit() or not iface:
        raise UsageError(f"-i {spec!r}: expected PORT@IFACE, e.g. 1@veth1")
    return int(port), iface


def parse_port_params(spec: str) -> tuple[int, dict]:
    port, sep, rest = spec.partition(":")
    if not sep or not port.isdigit():
        raise UsageError(f"--port-params {spec!r}: expected PORT:key=value,...")
    params = {}
    for item in filter(None, rest.split(",")):
        key, eq, value = item.partition("=")
        if not eq or key not in PORT_PARAM_KEYS:
            raise UsageError(f"--port-params {spec!r}: unknown or malformed {item!r} "
                             f"(keys: {', '.join(PORT_PARAM_KEYS)})")
        try:
            params[key] = PORT_PARAM_KEYS[key](value)
        except ValueError:
            raise UsageError(f"--port-params {spec!r}: bad value for {key}: {value!r}") from None
    return int(port), params


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="fabriclab-switch", description=(
        "Embedded P4 switch: runs a bmv2 JSON (v1model) and serves P4Runtime, "
        "with simple_switch_grpc's flags."))
    ap.add_argument("json", nargs="?", help="bmv2 JSON program (omit with --no-p4)")
    ap.add_argument("--no-p4", action="store_true", help="start without a program")
    ap.add_argument("--device-id", type=int, default=0)
    ap.add_argument("-i", "--interface", action="append", default=[], metavar="PORT@IFACE")
    ap.add_argument("--cpu-port", type=int, default=None)
    ap.add_argument("--grpc-server-addr", default="0.0.0.0:9559")
    ap.add_argument("--log-console", action="store_true")
    ap.add_argument("--log-file", default=None)
    ap.add_argument("-L", "--log-level", default=None, help="accepted for compatibility")
    ap.add_argument("--pcap", nargs="?", const=".", default=None, metavar="DIR")
    ap.add_argument("--priority-queues", type=int, default=1)
    ap.add_argument("--thrift-port", type=int, default=None, help="ignored (no Thrift)")
    ap.add_argument("--port-params", action="append", default=[],
                    metavar="PORT:rate_pps=..,rate_bps=..,delay_us=..,depth=..,loss=..")
    ap.add_argument("--recirc-interval-us", type=float, default=50.0,
                    help="wait before each recirculation pass (default 50)")
    ap.add_argument("--switch-interval-us", type=float, default=DEFAULT_SWITCH_INTERVAL_US,
                    help="GIL switch interval: how soon the packet loop hands the "
                         "interpreter to a P4Runtime thread (default "
                         f"{DEFAULT_SWITCH_INTERVAL_US:g})")
    ap.add_argument("--control-rt-priority", type=int, default=DEFAULT_CONTROL_RT_PRIORITY,
                    help="SCHED_FIFO priority of the P4Runtime/control threads, where "
                         f"permitted (default {DEFAULT_CONTROL_RT_PRIORITY}; 0: none)")
    ap.add_argument("--control-nice", type=int, default=DEFAULT_CONTROL_NICE,
                    help="nice value of the P4Runtime/control threads, where permitted "
                         f"(default {DEFAULT_CONTROL_NICE}; 0 leaves them as the data plane)")
    return ap


def check_address_free(addr: str) -> None:
    host, sep, port = addr.rpartition(":")
    if not sep or not port.isdigit():
        raise UsageError(f"--grpc-server-addr {addr!r}: expected HOST:PORT")
    host = host.strip("[]") or "0.0.0.0"
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    s = socket.socket(family, socket.SOCK_STREAM)
    try:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((host, int(port)))
    except OSError as e:
        raise UsageError(f"gRPC address {addr} is not available: {e.strerror}") from None
    finally:
        s.close()


def main(argv: list[str] | None = None) -> int:
    try:
        return _main(argv)
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})


def _start_switch(args: argparse.Namespace) -> tuple[Switch, dict[int, str]]:
    """The switch the command line describes, its program loaded, its ports'
    parameters set, running; UsageError (and the switch's own errors) if it cannot."""
    if args.json is None and not args.no_p4:
        raise UsageError("give a bmv2 JSON program or --no-p4")
    ports = dict(parse_interface(s) for s in args.interface)
    port_params = [parse_port_params(s) for s in args.port_params]
    if args.thrift_port is not None:
        print(f"fabriclab-switch: note: --thrift-port {args.thrift_port} ignored "
              "(no Thrift server; use P4Runtime)", file=sys.stderr)
    program = None
    if args.json and not args.no_p4:
        try:
            with open(args.json) as f:
                program = json.load(f)
        except (OSError, json.JSONDecodeError) as e:
            raise UsageError(f"{args.json}: {e}") from None
    check_address_free(args.grpc_server_addr)
    set_switch_interval(args.switch_interval_us)
    if not -20 <= args.control_nice <= 19:
        raise UsageError(f"--control-nice must be in -20..19, got {args.control_nice}")
    if not 0 <= args.control_rt_priority <= 99:
        raise UsageError(f"--control-rt-priority must be in 0..99, got "
                         f"{args.control_rt_priority}")
    sw = Switch(ports, cpu_port=args.cpu_port, device_id=args.device_id,
                log_console=args.log_console, log_file=args.log_file, pcap_dir=args.pcap,
                priority_queues=args.priority_queues,
                recirc_interval_us=args.recirc_interval_us)
    if program is not None:
        sw.load_program(program)
    for port, params in port_params:
        sw.port_set_params(port, rate_pps=params.get("rate_pps"),
                           rate_bps=params.get("rate_bps"),
                           delay_us=params.get("delay_us"),
                           queue_depth=params.get("depth"),
                           loss=params.get("loss"))
    sw.start()
    return sw, ports


def _serve_p4runtime(sw: Switch, args: argparse.Namespace):
    """The switch's P4Runtime server, or None where grpc is not installed (the data
    plane runs alone, said on stderr); OSError where it cannot listen."""
    try:
        from p4switch.p4runtime_server import serve
    except ImportError as e:
        print(f"fabriclab-switch: note: P4Runtime server unavailable ({e}); "
              "running the data plane only", file=sys.stderr)
        return None
    try:
        return serve(sw, args.grpc_server_addr, args.device_id, args.cpu_port)
    except Exception as e:  # noqa: BLE001 - one clear line, whatever gRPC raised
        raise OSError(f"cannot serve P4Runtime on {args.grpc_server_addr}: {e}") from None


def _main(argv: list[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    argv = [a for a in argv if a != "--"]
    args = build_parser().parse_args(argv)
    # SIGTERM/SIGINT blocked while the data-plane and gRPC threads start (they
    # inherit the mask), unblocked below in this thread only: the kernel then
    # always delivers them here, where the handler can wake the wait.
    stop_signals = {signal.SIGTERM, signal.SIGINT}
    signal.pthread_sigmask(signal.SIG_BLOCK, stop_signals)
    try:
        sw, ports = _start_switch(args)
    except (UsageError, ProgramError, PortError, ControlPriorityError) as e:
        print(f"fabriclab-switch: error: {e}", file=sys.stderr)
        return 1

    # After the data-plane thread started (it keeps its nice value), before the gRPC
    # threads start (they inherit this thread's).
    notes = []
    if args.control_nice:
        notes.append(set_thread_nice(args.control_nice))
    if args.control_rt_priority:
        notes.append(set_thread_realtime(args.control_rt_priority))
    for note in filter(None, notes):
        print(f"fabriclab-switch: note: {note}", file=sys.stderr)
    try:
        server = _serve_p4runtime(sw, args)
    except OSError as e:
        sw.stop()
        print(f"fabriclab-switch: error: {e}", file=sys.stderr)
        return 1
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda _s, _f: stop.set())
    signal.pthread_sigmask(signal.SIG_UNBLOCK, stop_signals)
    print(f"fabriclab-switch: device {args.device_id} running, ports "
          f"{', '.join(f'{p}@{i}' for p, i in sorted(ports.items())) or 'none'}, "
          f"P4Runtime on {args.grpc_server_addr if server else '(none)'}", file=sys.stderr)
    while not stop.wait(3600):
        pass
    if server is not None:
        server.stop(0)
    sw.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
