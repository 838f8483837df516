"""Trace analysis speed: frames per second through traffic.analysis.analyze, and the
same frames decoded with Scapy, side by side (the ratio is why the hot path is a
struct codec).

A synthetic run: 8 flows, 1,000,000 RC DATA frames with one in 1000 lost and
retransmitted, in a nanosecond pcap and a sender log, in a temporary directory.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from traffic.analysis import ReceiverTrace, analyze
from traffic.frames import DATA_CODEC, ETHERTYPE_FABRIC, OPCODE_RC_SEND, Kind
from traffic.pcap import read_frames, write_pcap
from traffic.sender import APP_LEN, BTH_LEN, write_log_rows

FRAMES = 1_000_000
FLOWS = 8
SCAPY_SAMPLE = 20_000


def _run(out: Path) -> tuple[Path, Path]:
    rows, frames = [], []
    payload = bytes(64)
    t = 1_700_000_000_000_000_000
    for i in range(FRAMES):
        flow, psn = 1 + i % FLOWS, i // FLOWS
        t += 50_000
        rows.append((flow, psn, t))
        if i % 1000 == 999:  # lost once, sent again
            t += 50_000
            rows.append((flow, psn, t))
        frame = DATA_CODEC.pack(
            dst_addr=2, src_addr=1, ether_type=ETHERTYPE_FABRIC, vl=0, sl=0, kind=Kind.DATA,
            dlid=2, slid=1, pkt_len=BTH_LEN + APP_LEN + len(payload), opcode=OPCODE_RC_SEND, pkey=0xFFFF,
            dest_qp=0, psn=psn, flow_id=flow, coll_id=1, step=0, chunk=psn, send_ts=t)
        frames.append((t + 20_000, frame + payload))
    log, pcap = out / "h1.sent.csv", out / "h2.pcap"
    write_log_rows(log, rows)
    write_pcap(pcap, frames)
    return log, pcap


def main() -> dict[str, float]:
    from scapy.layers.l2 import Ether

    with tempfile.TemporaryDirectory() as tmp:
        log, pcap = _run(Path(tmp))
        started = time.perf_counter()
        metrics = analyze([log], [ReceiverTrace(pcap, dlid=2)])
        ours = time.perf_counter() - started
        assert metrics["lost"] == 0 and metrics["retransmitted"] == FRAMES // 1000
        sample = []
        for _ts, frame in read_frames(pcap):
            sample.append(frame)
            if len(sample) == SCAPY_SAMPLE:
                break
        started = time.perf_counter()
        for frame in sample:
            Ether(frame)
        scapy = time.perf_counter() - started
    ours_fps = FRAMES / ours
    scapy_fps = SCAPY_SAMPLE / scapy
    print(f"   analyze: {FRAMES} frames in {ours:.1f} s = {ours_fps:,.0f} frames/s; "
          f"Scapy decode alone: {scapy_fps:,.0f} frames/s; ratio {ours_fps / scapy_fps:.1f}")
    return {"analysis_frames_per_s": round(ours_fps), "scapy_decode_frames_per_s":
            round(scapy_fps), "analysis_vs_scapy_ratio": round(ours_fps / scapy_fps, 2)}


if __name__ == "__main__":
    main()
