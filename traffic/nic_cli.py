"""The NIC emulator's command line: `python -m traffic.nic_cli`, options in traffic/nic.py's
module doc. Reads FLOWS.json (asking
the SA for the addresses it names), opens the port, prints a ready line, waits for the
start time, runs, writes the logs and prints a one-line summary."""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from pathlib import Path

from traffic import nic as nic_module
from traffic.addressing import sa_lookup
from traffic.flow_control import (
    DEFAULT_FRAME_BYTES,
    PFC_XOFF,
    PFC_XON,
    FlowControl,
)
from traffic.nic import Nic
from traffic.nic_config import (
    RC_PAUSED_TIMEOUTS,
    RC_RETRANSMISSIONS,
    RC_RTO_MODES,
    RC_TIMEOUT_RESENDS,
    RC_WINDOW_CONTROLS,
    TRANSPORTS,
    NicConfig,
    NicConfigError,
    Workload,
    load_flows_file,
)
from traffic.nic_socket import iface_mac


def _sa_lookup(args: argparse.Namespace):
    """The SA, asked over this NIC's port, for a FLOWS.json that names hosts."""
    def lookup(own, names):
        mac = args.mac or iface_mac(args.iface)
        return sa_lookup(args.iface, mac, args.sa_timeout, args.sa_retries)(own, names)
    return lookup


def _start_at(option: str | None, control: str | None) -> float | None:
    """--start-at: seconds, or '-' for the line 'start_at SECONDS' on stdin (sent once
    every NIC of the run is ready: a frame then never reaches a NIC not listening yet)."""
    if option is None:
        return None
    if option != "-":
        try:
            return float(option)
        except ValueError:
            raise ValueError(f"--start-at {option!r}: expected seconds or '-'") from None
    if control == "-":
        raise ValueError("--start-at - and --control - both want stdin")
    line = sys.stdin.readline()
    word, _, value = line.strip().partition(" ")
    try:
        if word != "start_at":
            raise ValueError
        return float(value)
    except ValueError:
        raise ValueError(f"expected 'start_at SECONDS' on stdin, got {line.strip()!r}"
                         f"{' (end of input)' if not line else ''}") from None


def _write_addresses(log_dir: str, name: str, port: dict) -> None:
    """What the SA told this NIC (NAME.addresses.json beside its logs)."""
    if "addresses" in port:
        Path(log_dir).mkdir(parents=True, exist_ok=True)
        (Path(log_dir) / f"{name}.addresses.json").write_text(
            json.dumps(port["addresses"], indent=1) + "\n")


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="traffic.nic_cli", description=(nic_module.__doc__ or "").splitlines()[0])
    ap.add_argument("--iface", required=True)
    ap.add_argument("--mode", required=True, choices=[m.value for m in FlowControl])
    ap.add_argument("--rate-pps", type=float, required=True, help="link rate, frames/s")
    ap.add_argument("--buffer", type=int, default=64, help="receive buffer per class, frames")
    ap.add_argument("--xoff", type=int, default=PFC_XOFF, help="PFC: pause at this occupancy")
    ap.add_argument("--xon", type=int, default=PFC_XON, help="PFC: resume at or below this")
    ap.add_argument("--drain-pps", type=float, default=None,
                    help="receive-buffer drain rate (default: --rate-pps; 0: no buffering)")
    ap.add_argument("--credit-coalesce", type=int, default=4)
    ap.add_argument("--credit-refresh-ms", type=float, default=5.0)
    ap.add_argument("--credit-request-ms", type=float, default=20.0)
    ap.add_argument("--frame-bytes", type=int, default=DEFAULT_FRAME_BYTES,
                    help="frame size that, with --rate-pps, gives the link's bits/s "
                         "(pause quanta)")
    ap.add_argument("--vls", default="0", help="classes to advertise credits for, e.g. 0,1")
    ap.add_argument("--storm-interval-ms", type=float, default=1.0)
    ap.add_argument("--transport", choices=TRANSPORTS, default=None,
                    help="ud: nobody acknowledges (default); rc: ACK/NAK and go-back-N "
                         "retransmission, as InfiniBand RC (default: FLOWS.json, else ud)")
    ap.add_argument("--rc-timeout-ms", type=float, default=100.0,
                    help="the retransmission timeout before a round trip was measured "
                         "(with --rc-rto fixed: always)")
    ap.add_argument("--rc-rto", choices=RC_RTO_MODES, default="adaptive",
                    help="adaptive: SRTT + 4 RTTVAR from ACKs, within --rc-rto-min-ms.."
                         "--rc-rto-max-ms (traffic/rc_rto.py); fixed: --rc-timeout-ms")
    ap.add_argument("--rc-rto-min-ms", type=float, default=10.0)
    ap.add_argument("--rc-rto-max-ms", type=float, default=800.0)
    ap.add_argument("--rc-paused-timeouts", choices=RC_PAUSED_TIMEOUTS, default="defer",
                    help="a timeout while our class is paused or out of credit: defer "
                         "(wait for the link) or retransmit (as RNICs do)")
    ap.add_argument("--rc-retransmission", choices=RC_RETRANSMISSIONS, default="go-back-n",
                    help="what a NAK resends: go-back-n (the window from the NAKed PSN, as "
                         "InfiniBand RC) or selective (only the hole the receiver names; it "
                         "keeps the frames past it)")
    ap.add_argument("--rc-timeout-resend", choices=RC_TIMEOUT_RESENDS, default="probe",
                    help="what a timeout resends: probe (the oldest frame, then the rest "
                         "once it is acknowledged) or window (go-back-N, as InfiniBand)")
    ap.add_argument("--rc-retry-limit", type=int, default=7)
    ap.add_argument("--rc-ack-every", type=int, default=16)
    ap.add_argument("--rc-window", type=int, default=128,
                    help="unacknowledged frames per flow at most")
    ap.add_argument("--rc-window-control", choices=RC_WINDOW_CONTROLS, default="fixed",
                    help="delay: the window follows the round trip between twice "
                         "--rc-ack-every and --rc-window (traffic/rc_window.py); fixed: "
                         "--rc-window always")
    ap.add_argument("--flows", help="FLOWS.json (name, lid, flows, recvs, actions)")
    ap.add_argument("--log-dir", required=True)
    ap.add_argument("--duration", type=float, required=True, help="seconds from the start")
    ap.add_argument("--start-at", default=None,
                    help="CLOCK_REALTIME seconds at which flows' start_s = 0 (default: now); "
                         "'-': read 'start_at SECONDS' from stdin once ready (a fleet that "
                         "starts every NIC only once all of them listen)")
    ap.add_argument("--until-done", action="store_true",
                    help="stop once every flow is sent and every expected receive arrived")
    ap.add_argument("--control", help="unix socket path for control commands, or - for stdin")
    ap.add_argument("--rt-priority", type=int, default=10,
                    help="SCHED_FIFO priority (1-99) so that a loaded machine does not make "
                         "the NIC miss its deadlines; 0: normal scheduling")
    ap.add_argument("--name", help="log file prefix (default: FLOWS.json name or the iface)")
    ap.add_argument("--lid", type=int, default=None)
    ap.add_argument("--mac", default=None, help="source MAC (default: the interface's)")
    ap.add_argument("--sa-timeout", type=float, default=1.0,
                    help="seconds per try of a path query to the SA (FLOWS.json naming hosts)")
    ap.add_argument("--sa-retries", type=int, default=5, help="tries per path query")
    return ap


def _config(args: argparse.Namespace, port: dict) -> NicConfig:
    """The NIC's configuration: the command line, with FLOWS.json's port (name, LID,
    MAC, classes, SL-to-VL map, transport, VL arbitration) where it gives one."""
    return NicConfig(
        iface=args.iface, mode=FlowControl(args.mode), rate_pps=args.rate_pps,
        mac=args.mac or port.get("mac") or iface_mac(args.iface),
        name=args.name or port.get("name") or args.iface,
        lid=args.lid if args.lid is not None else port.get("lid"),
        buffer=args.buffer, xoff=args.xoff, xon=args.xon, drain_pps=args.drain_pps,
        credit_coalesce=args.credit_coalesce, credit_refresh_ms=args.credit_refresh_ms,
        credit_request_ms=args.credit_request_ms, frame_bytes=args.frame_bytes,
        vls=port.get("vls") or tuple(int(v) for v in args.vls.split(",")),
        sl_to_vl=port.get("sl_to_vl", tuple(range(16))),
        storm_interval_ms=args.storm_interval_ms,
        transport=args.transport or port.get("transport", "ud"),
        rc_timeout_ms=args.rc_timeout_ms, rc_retry_limit=args.rc_retry_limit,
        rc_rto=args.rc_rto, rc_rto_min_ms=args.rc_rto_min_ms,
        rc_rto_max_ms=args.rc_rto_max_ms, rc_paused_timeouts=args.rc_paused_timeouts,
        rc_timeout_resend=args.rc_timeout_resend, rc_retransmission=args.rc_retransmission,
        rc_ack_every=args.rc_ack_every, rc_window=args.rc_window,
        rc_window_control=args.rc_window_control,
        sl_of_lid=port.get("sl_of_lid", ()),
        vl_arbitration=port.get("vl_arbitration"))


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        port, workload = load_flows_file(args.flows, _sa_lookup(args), args.name) \
            if args.flows else ({}, Workload())
        _write_addresses(args.log_dir, args.name or port.get("name") or args.iface, port)
        config = _config(args, port)
        nic = Nic(config, workload, control_path=None if args.control in (None, "-")
                  else args.control, control_stdin=args.control == "-")
    except (NicConfigError, OSError) as exc:
        print(f"traffic.nic: error: {exc}", file=sys.stderr)
        return 2
    nic.until_done = args.until_done
    if args.rt_priority:
        # SCHED_FIFO: a loaded machine then delays the NIC's deadlines by far less.
        # The loop never spins, so it cannot starve the machine.
        try:
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(args.rt_priority))
        except OSError as exc:
            print(f"traffic.nic: warning: no SCHED_FIFO ({exc.strerror}); timing may suffer",
                  file=sys.stderr)
    signal.signal(signal.SIGTERM, nic.stop_soon)
    signal.signal(signal.SIGINT, nic.stop_soon)
    print(json.dumps({"ready": True, "name": config.name, "pid": os.getpid()}), flush=True)
    try:
        start_at = _start_at(args.start_at, args.control)
    except ValueError as exc:
        nic.close()
        print(f"traffic.nic: error: {exc}", file=sys.stderr)
        return 2
    try:
        nic.run(args.duration, None if start_at is None else int(start_at * 1e9))
        paths = nic.write_logs(args.log_dir)
    except OSError as exc:
        print(f"traffic.nic: error: {exc}", file=sys.stderr)
        return 1
    finally:
        nic.close()
    summary = json.loads(paths["summary"].read_text())
    print(json.dumps({k: summary[k] for k in ("name", "sent", "received", "rx_dropped",
                                              "rate_kept", "done")}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
