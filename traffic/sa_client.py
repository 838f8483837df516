"""A host's side of subnet administration: ask the SM for a path, hear about changed paths.

    sock = open_sa_socket("h1-eth0")
    record = query_path(sock, iface_mac("h1-eth0"), slid=0, dst="h3")
    # PathRecord(dlid=3, sl=0, slid=1, sguid=.., dguid=.., dname='h3', dmac='02:..', ...)
    notice = parse_sa_frame(frame)        # a REPORT: notice.records are the changed paths
    sock.send(report_ack(notice, src_mac))

`query_path` sends a GET PathRecord (traffic/frames.py, LRH kind SA) out of
the host's port; the switch punts it to the SM, whose Subnet Administrator
(controller/sa.py) answers out of the same port. The answer carries the
destination's LID, SL, GUID, MAC and name, and the asking host's own LID
(`slid`), so a host that does not know its LID yet may pass slid=0. No answer
within `timeout` is retried with the same transaction id, `retries` times in
all; then `SaTimeout`. An answer with an error status raises `SaQueryError`.
Both name the destination.

After a global reroute that changes a destination's LID or SL, the SM sends
every host a REPORT listing those paths; a host acknowledges it with
`report_ack` (the SM re-sends until it does) and from then on sends to each
listed `dlid` with the record's `sl` (and the VL that SL maps to).

Command line (in the host's namespace):
    python -m traffic.sa_client --iface h1-eth0 --dst h3 [--json]
    python -m traffic.sa_client --iface h1-eth0 --listen 10 [--json]   # print REPORTs, ack them
"""

from __future__ import annotations

import argparse
import json
import os
import select
import socket
import sys
import time
from collections.abc import Callable
from dataclasses import asdict

from traffic import nic
from traffic.frames import (
    ETHERTYPE_FABRIC,
    LRH_KIND_OFFSET,
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

__all__ = ["SaError", "SaQueryError", "SaTimeout", "iface_mac", "listen", "open_sa_socket",
           "parse_sa_frame", "query_path", "report_ack"]


class SaError(Exception):
    """A path query that did not give a path."""


class SaTimeout(SaError):
    """No answer from the SA."""


class SaQueryError(SaError):
    """The SA answered with an error status; `status` says which."""

    def __init__(self, message: str, status: SaStatus | int) -> None:
        super().__init__(message)
        self.status = status


def open_sa_socket(iface: str) -> socket.socket:
    """A packet socket on `iface` that sees only fabric frames (needs CAP_NET_RAW)."""
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETHERTYPE_FABRIC))
    try:
        sock.bind((iface, ETHERTYPE_FABRIC))
    except OSError:
        sock.close()
        raise
    return sock


def iface_mac(iface: str) -> str:
    try:
        return nic.iface_mac(iface)
    except nic.NicConfigError as exc:
        raise SaError(str(exc)) from None


def _destination(dst: str | PathRecord) -> PathRecord:
    return dst if isinstance(dst, PathRecord) else PathRecord(dname=dst)


def _name(dst: PathRecord) -> str:
    if dst.dname:
        return dst.dname
    if dst.dguid:
        return f"guid {dst.dguid:#018x}"
    return f"lid {dst.dlid}"


def query_path(sock_or_iface: socket.socket | str, src_mac: str, slid: int,
               dst: str | PathRecord, timeout: float = 1.0, retries: int = 3,
               on_notice: Callable[[SaMessage], None] | None = None) -> PathRecord:
    """The SM's path from this host to `dst` (a host name, or a PathRecord naming the
    destination by dguid, dlid or dname). A REPORT arriving meanwhile goes to
    `on_notice` (it is not acknowledged here). Raises SaTimeout, SaQueryError."""
    own = isinstance(sock_or_iface, str)
    sock = open_sa_socket(sock_or_iface) if own else sock_or_iface
    try:
        return _query(sock, src_mac, slid, _destination(dst), timeout, retries, on_notice)
    finally:
        if own:
            sock.close()


def _query(sock: socket.socket, src_mac: str, slid: int, dst: PathRecord, timeout: float,
           retries: int, on_notice: Callable[[SaMessage], None] | None) -> PathRecord:
    tid = int.from_bytes(os.urandom(8), "big")
    query = sa_frame(SaMethod.GET, tid, [dst], src_mac=mac_to_int(src_mac), slid=slid)
    for _ in range(max(1, retries)):
        sock.send(query)
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            message = _receive(sock, left)
            if message is None:
                break
            if message.method is SaMethod.REPORT and on_notice is not None:
                on_notice(message)
            if message.method is not SaMethod.GET_RESP or message.tid != tid:
                continue
            if message.status != SaStatus.OK or len(message.records) != 1:
                status = (message.status.name if isinstance(message.status, SaStatus)
                          else f"status {message.status}")
                raise SaQueryError(f"path to {_name(dst)}: the SA answered {status}",
                                   message.status)
            return message.records[0]
    raise SaTimeout(f"path to {_name(dst)}: no answer from the SA after {max(1, retries)} "
                    f"tries of {timeout:g} s")


def _receive(sock: socket.socket, timeout: float) -> SaMessage | None:
    """The next SA frame within `timeout` (None when none came); other frames are skipped."""
    deadline = time.monotonic() + timeout
    while (left := deadline - time.monotonic()) > 0:
        ready, _, _ = select.select([sock], [], [], left)
        if not ready:
            return None
        frame = sock.recv(2048)
        if len(frame) <= LRH_KIND_OFFSET or frame[LRH_KIND_OFFSET] != Kind.SA:
            continue
        try:
            return parse_sa_frame(frame)
        except SaFrameError:
            continue
    return None


def report_ack(notice: SaMessage, src_mac: str, slid: int = 0) -> bytes:
    """The REPORT_RESP that tells the SM this host has the REPORT (same tid)."""
    return sa_frame(SaMethod.REPORT_RESP, notice.tid, src_mac=mac_to_int(src_mac), slid=slid)


def listen(sock: socket.socket, src_mac: str, duration: float,
           on_notice: Callable[[SaMessage], None], ack: bool = True) -> int:
    """Hand every REPORT that arrives within `duration` seconds to `on_notice` (after
    acknowledging it); a re-sent REPORT already seen is acknowledged again but not
    handed on. Returns the number of REPORTs handed on."""
    seen: set[int] = set()
    deadline = time.monotonic() + duration
    while (left := deadline - time.monotonic()) > 0:
        message = _receive(sock, left)
        if message is None or message.method is not SaMethod.REPORT:
            continue
        if ack:
            sock.send(report_ack(message, src_mac, message.records[0].slid
                                 if message.records else 0))
        if message.tid not in seen:
            seen.add(message.tid)
            on_notice(message)
    return len(seen)


def _record_json(record: PathRecord) -> dict:
    out = asdict(record)
    out["sguid"] = f"{record.sguid:#018x}"
    out["dguid"] = f"{record.dguid:#018x}"
    return out


def _notice_json(notice: SaMessage) -> dict:
    return {"method": notice.method.name, "tid": notice.tid,
            "records": [_record_json(r) for r in notice.records]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m traffic.sa_client", description=(
        "Ask the SM's Subnet Administrator for the path to a host, or print the REPORTs "
        "it sends after a global reroute."))
    ap.add_argument("--iface", required=True, help="the host's fabric interface")
    what = ap.add_mutually_exclusive_group(required=True)
    what.add_argument("--dst", help="destination host name")
    what.add_argument("--dst-lid", type=int, help="destination LID")
    what.add_argument("--dst-guid", type=lambda s: int(s, 0), help="destination port GUID")
    what.add_argument("--listen", type=float, metavar="SECONDS",
                      help="print (and acknowledge) REPORTs for this long")
    ap.add_argument("--src-mac", help="source MAC (default: the interface's)")
    ap.add_argument("--slid", type=int, default=0, help="own LID if known (default 0)")
    ap.add_argument("--timeout", type=float, default=1.0, help="seconds per try (default 1)")
    ap.add_argument("--retries", type=int, default=3, help="tries in all (default 3)")
    ap.add_argument("--json", action="store_true", help="one JSON object per line")
    args = ap.parse_args(argv)
    try:
        src_mac = args.src_mac or iface_mac(args.iface)
        sock = open_sa_socket(args.iface)
    except (SaError, OSError) as exc:
        print(f"sa_client: error: {exc}", file=sys.stderr)
        return 2
    try:
        if args.listen is not None:
            print(f"listening on {args.iface}", file=sys.stderr, flush=True)

            def show(notice: SaMessage) -> None:
                if args.json:
                    print(json.dumps(_notice_json(notice)), flush=True)
                    return
                for r in notice.records:
                    print(f"REPORT {notice.tid}: {r.dname or r.dlid}: dlid {r.dlid} sl {r.sl}",
                          flush=True)

            listen(sock, src_mac, args.listen, show)
            return 0
        dst = PathRecord(dname=args.dst or "", dlid=args.dst_lid or 0, dguid=args.dst_guid or 0)
        start = time.perf_counter()
        try:
            record = query_path(sock, src_mac, args.slid, dst, args.timeout, args.retries)
        except SaError as exc:
            print(f"sa_client: error: {exc}", file=sys.stderr)
            return 1
        rtt_ms = (time.perf_counter() - start) * 1e3
        if args.json:
            print(json.dumps({**_record_json(record), "rtt_ms": round(rtt_ms, 3)}))
        else:
            print(f"{record.dname or _name(dst)}: dlid {record.dlid} sl {record.sl} "
                  f"(own lid {record.slid}) guid {record.dguid:#018x} mac {record.dmac} "
                  f"[{rtt_ms:.2f} ms]")
        return 0
    finally:
        sock.close()


if __name__ == "__main__":
    sys.exit(main())
