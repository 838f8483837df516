"""Emit N numbered DATA frames of one flow at a fixed rate, and log what was sent.

Pacing uses absolute deadlines on CLOCK_MONOTONIC (frame i is due at
start + i / rate), so a late frame does not push every later one back: the
schedule never drifts, a sender that fell behind catches up. The timestamp in
each frame (APP.send_ts) and in the log is CLOCK_REALTIME in ns (time.time_ns),
the clock tcpdump stamps captures with, so one-way delay is capture ts - send_ts
on a single machine (all network namespaces share that clock).

Sender log (text, one line per frame, written once at the end):

    # fabriclab sender log v1 clock=CLOCK_REALTIME
    flow,psn,send_ns
    7,0,1764685012345678901
    ...

Command line:
    python -m traffic.sender --iface h1-eth0 --src-mac .. --dst-mac .. --slid 1 --dlid 2 \
        --flow 7 --count 1000 --rate 2000 --payload 64 --log results/run/h1.flow7.csv
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import socket
import sys
import time
from array import array
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

from traffic.frames import DATA_CODEC, ETHERTYPE_FABRIC, Kind, mac_to_int

LOG_HEADER = "# fabriclab sender log v1 clock=CLOCK_REALTIME\nflow,psn,send_ns\n"
RATE_KEPT_SHARE = 0.95  # achieved/target below this and the run says the rate was not kept
LRH_LEN, BTH_LEN, APP_LEN = 8, 10, 20


class SenderLogError(Exception):
    """A sender log that cannot be read: names the file and the line."""


@dataclass(frozen=True)
class SenderConfig:
    """One flow: who sends to whom, how many frames, how fast."""

    src_mac: str
    dst_mac: str
    slid: int
    dlid: int
    flow: int
    count: int
    rate_pps: float
    payload: int = 64  # bytes after the APP header
    sl: int = 0
    vl: int = 0
    dest_qp: int = 0
    coll_id: int = 0
    step: int = 0
    first_psn: int = 0
    pkey: int = 0xFFFF  # the default partition, full member


@dataclass(frozen=True)
class SenderResult:
    """What a sender did; `send_ns[i]` is the CLOCK_REALTIME ns at which PSN first_psn+i left."""

    flow: int
    sent: int
    target_pps: float
    achieved_pps: float | None  # None with fewer than 2 frames
    rate_kept: bool
    reason: str  # why the rate was not kept, "" when it was
    max_lateness_us: float  # worst delay of a send behind its deadline
    tx_retries: int  # sends retried because the socket buffer was full (ENOBUFS)
    first_psn: int = 0
    send_ns: array = field(default_factory=lambda: array("q"), repr=False)

    def summary(self) -> dict:
        d = asdict(self)
        d.pop("send_ns")
        d["clock"] = "CLOCK_REALTIME"
        return d


def frame_template(config: SenderConfig) -> list[int]:
    """DATA_CODEC field values for the flow's frames (psn and send_ts are filled per frame)."""
    values = {
        "dst_addr": mac_to_int(config.dst_mac), "src_addr": mac_to_int(config.src_mac),
        "ether_type": ETHERTYPE_FABRIC, "vl": config.vl, "sl": config.sl, "kind": Kind.DATA,
        "dlid": config.dlid, "slid": config.slid,
        "pkt_len": BTH_LEN + APP_LEN + config.payload, "opcode": 0, "pkey": config.pkey,
        "dest_qp": config.dest_qp, "psn": 0, "flow_id": config.flow,
        "coll_id": config.coll_id, "step": config.step, "chunk": 0, "send_ts": 0,
    }
    return [int(values[name]) for name in DATA_CODEC.fields]


def send_data_frames(config: SenderConfig, transmit: Callable[[bytes], object]) -> SenderResult:
    """Send config.count DATA frames through `transmit(frame)` at config.rate_pps.

    `transmit` may raise OSError(ENOBUFS) when the device queue is full: the
    frame is retried after a short pause and counted in tx_retries.
    """
    if config.count < 0 or config.rate_pps <= 0:
        raise ValueError(f"need count >= 0 and rate > 0, got {config.count} at {config.rate_pps}")
    values = frame_template(config)
    psn_i = DATA_CODEC.fields.index("psn")
    ts_i = DATA_CODEC.fields.index("send_ts")
    chunk_i = DATA_CODEC.fields.index("chunk")
    payload = bytes(config.payload)
    pack = DATA_CODEC.pack_values
    period_ns = 1e9 / config.rate_pps
    send_ns = array("q", bytes(8 * config.count))
    retries = 0
    max_late_ns = 0
    monotonic_ns, time_ns, sleep = time.monotonic_ns, time.time_ns, time.sleep

    start = monotonic_ns()
    for i in range(config.count):
        deadline = start + int(i * period_ns)
        now = monotonic_ns()
        if deadline > now:
            sleep((deadline - now) / 1e9)
        else:
            max_late_ns = max(max_late_ns, now - deadline)
        values[psn_i] = config.first_psn + i
        values[chunk_i] = i
        ts = time_ns()
        values[ts_i] = ts
        frame = pack(*values) + payload
        while True:
            try:
                transmit(frame)
                break
            except OSError as exc:
                if exc.errno != errno.ENOBUFS:
                    raise
                retries += 1
                sleep(100e-6)
        send_ns[i] = ts

    achieved = _achieved_rate(send_ns)
    kept = achieved is None or achieved >= RATE_KEPT_SHARE * config.rate_pps
    reason = "" if kept else (
        f"achieved {achieved:.1f} pps < {RATE_KEPT_SHARE:.0%} of target {config.rate_pps:g} pps "
        f"(worst send {max_late_ns / 1e3:.0f} us behind schedule, {retries} ENOBUFS retries)")
    return SenderResult(flow=config.flow, sent=config.count, target_pps=config.rate_pps,
                        achieved_pps=achieved, rate_kept=kept, reason=reason,
                        max_lateness_us=max_late_ns / 1e3, tx_retries=retries,
                        first_psn=config.first_psn, send_ns=send_ns)


def _achieved_rate(send_ns: array) -> float | None:
    """Frames per second between the first and last send; None when there is no interval."""
    if len(send_ns) < 2 or send_ns[-1] == send_ns[0]:
        return None
    return (len(send_ns) - 1) * 1e9 / (send_ns[-1] - send_ns[0])


def open_raw_socket(iface: str, sndbuf: int = 4 << 20) -> socket.socket:
    """An AF_PACKET socket that sends whole Ethernet frames out of `iface` (needs CAP_NET_RAW)."""
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, sndbuf)
        sock.bind((iface, 0))
    except OSError:
        sock.close()
        raise
    return sock


def write_log(path: Path | str, result: SenderResult) -> None:
    """Write the sender log (see module doc) atomically."""
    flow, first = result.flow, result.first_psn
    write_log_rows(path, ((flow, first + i, ts) for i, ts in enumerate(result.send_ns)))


def write_log_rows(path: Path | str, rows: Iterable[tuple[int, int, int]]) -> None:
    """Write a sender log of (flow, psn, send_ns) rows, any flows interleaved, atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w") as f:
        f.write(LOG_HEADER)
        f.writelines(f"{flow},{psn},{ts}\n" for flow, psn, ts in rows)
    os.replace(tmp, path)


def read_log(path: Path | str) -> Iterator[tuple[int, int, int]]:
    """(flow, psn, send_ns) for every line of a sender log."""
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            if line.startswith("#") or line.startswith("flow,"):
                continue
            try:
                flow, psn, ts = line.split(",")
                yield int(flow), int(psn), int(ts)
            except ValueError:
                raise SenderLogError(
                    f"{path}:{lineno}: expected 'flow,psn,send_ns', found {line.strip()!r}"
                ) from None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="traffic.sender", description=__doc__.splitlines()[0])
    ap.add_argument("--iface", required=True)
    ap.add_argument("--src-mac", required=True)
    ap.add_argument("--dst-mac", required=True)
    ap.add_argument("--slid", type=int, required=True)
    ap.add_argument("--dlid", type=int, required=True)
    ap.add_argument("--flow", type=int, required=True)
    ap.add_argument("--count", type=int, required=True)
    ap.add_argument("--rate", type=float, required=True, help="frames per second")
    ap.add_argument("--payload", type=int, default=64, help="bytes after the APP header")
    ap.add_argument("--sl", type=int, default=0, help="service level")
    ap.add_argument("--vl", type=int, default=0, help="virtual lane (credit mode)")
    ap.add_argument("--dest-qp", type=int, default=0)
    ap.add_argument("--coll-id", type=int, default=0, help="collective id")
    ap.add_argument("--step", type=int, default=0, help="collective step")
    ap.add_argument("--first-psn", type=int, default=0)
    ap.add_argument("--log", required=True, help="sender log to write (CSV)")
    ap.add_argument("--summary", help="summary JSON (default: LOG with .summary.json)")
    args = ap.parse_args(argv)
    config = SenderConfig(src_mac=args.src_mac, dst_mac=args.dst_mac, slid=args.slid,
                          dlid=args.dlid, flow=args.flow, count=args.count,
                          rate_pps=args.rate, payload=args.payload, sl=args.sl, vl=args.vl,
                          dest_qp=args.dest_qp, coll_id=args.coll_id, step=args.step,
                          first_psn=args.first_psn)
    try:
        with open_raw_socket(args.iface) as sock:
            result = send_data_frames(config, sock.send)
    except (OSError, ValueError) as exc:
        print(f"traffic.sender: error: {exc}", file=sys.stderr)
        return 1
    write_log(args.log, result)
    summary = result.summary() | {"iface": args.iface, "log": str(args.log)}
    summary_path = Path(args.summary or Path(args.log).with_suffix(".summary.json"))
    summary_path.write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
