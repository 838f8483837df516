"""Figures of partitions and QoS runs (DESIGN.md "Partitions and QoS").

* class_bandwidth: per traffic class, delivered DATA frames per second in
  consecutive bins from the start of traffic (NICs' receive logs, `admitted` 1),
  and the same in bytes/s (frame bytes of each flow's class).
* class_share: the share of the given senders' transmissions (sender logs) that
  a class took during a window: for a NIC that sends one frame per slot at the
  link rate, its share of the link.
* cross_partition: DATA frames captured at a host (its pcap, what reached its
  port) from a sender that shares no partition with it (InfiniBand's rule: both
  members, one full); must be 0 when the edge enforces partitions.
* pkey_drops: the switches' `pkey` drop counters, summed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from traffic.frames import DATA_CODEC, ETHERTYPE_FABRIC, LRH_KIND_OFFSET, Kind
from traffic.nic_summary import read_recv_log
from traffic.pcap import read_frames
from traffic.sender import read_log
from traffic.timing import goodput_timeline

_SLID = DATA_CODEC.fields.index("slid")
_DLID = DATA_CODEC.fields.index("dlid")
_FLOW = DATA_CODEC.fields.index("flow_id")


def class_bandwidth(recv_logs: Iterable[Path | str], flow_classes: Mapping[str, Mapping],
                    start_ns: int, end_ns: int, bin_ms: float,
                    frame_bytes: Mapping[str, int] | None = None) -> dict:
    """{"bin_ms", "pps": {class: [frames/s per bin]}, "bytes_per_s": {class: [...]}}."""
    arrivals: dict[str, list[int]] = {}
    for path in recv_logs:
        for r in read_recv_log(path):
            info = flow_classes.get(str(r.flow))
            if info is not None and r.admitted == 1:
                arrivals.setdefault(info["class"], []).append(r.recv_ns)
    pps = goodput_timeline(arrivals, start_ns, bin_ms, end_ns) if arrivals else {}
    sizes = frame_bytes or {}
    return {"bin_ms": bin_ms, "pps": {c: [round(x, 1) for x in v] for c, v in pps.items()},
            "bytes_per_s": {c: [round(x * sizes.get(c, 0)) for x in v]
                            for c, v in pps.items()}}


def class_share(sent_logs: Iterable[Path | str], flow_classes: Mapping[str, Mapping],
                senders: Iterable[str], start_ns: int, end_ns: int) -> dict[str, float]:
    """Share of each class in the frames `senders` transmitted in [start_ns, end_ns)."""
    wanted = set(senders)
    counts: dict[str, int] = {}
    for path in sent_logs:
        host = Path(path).name.split(".")[0]
        if host not in wanted:
            continue
        for flow, _psn, ts in read_log(path):
            info = flow_classes.get(str(flow))
            if info is not None and start_ns <= ts < end_ns:
                counts[info["class"]] = counts.get(info["class"], 0) + 1
    total = sum(counts.values())
    return {c: round(n / total, 4) for c, n in sorted(counts.items())} if total else {}


def cross_partition(pcaps: Mapping[str, Path | str], host_of_lid: Mapping[int, str],
                    may_talk) -> dict:
    """DATA frames each host's capture holds from senders it shares no partition with.
    `may_talk(src, dst)`: the partitions' rule. {"delivered", "by_host", "frames_seen"}."""
    by_host: dict[str, int] = {}
    seen = 0
    for host, pcap in pcaps.items():
        if not Path(pcap).exists():
            continue
        for _ts, frame in read_frames(pcap):
            if len(frame) < DATA_CODEC.size or frame[12:14] != ETHERTYPE_FABRIC.to_bytes(2, "big") \
                    or frame[LRH_KIND_OFFSET] != Kind.DATA:
                continue
            values = DATA_CODEC.unpack(frame)
            seen += 1
            src = host_of_lid.get(values[_SLID])
            if src is not None and not may_talk(src, host):
                by_host[host] = by_host.get(host, 0) + 1
    return {"delivered": sum(by_host.values()), "by_host": by_host, "frames_seen": seen}


def pkey_drops(drops: Mapping[str, Mapping[tuple[int, str], tuple[int, int]]]) -> dict:
    """{"total", "by_port": {"switch:port": packets}} of the `pkey` drop reason."""
    by_port = {f"{sw}:{port}": packets for sw, cells in sorted(drops.items())
               for (port, reason), (packets, _bytes) in sorted(cells.items())
               if reason == "pkey" and packets}
    return {"total": sum(by_port.values()), "by_port": by_port}
