"""The report's "Partitions and QoS" section (traffic/report.py registers it).

What the SM configured (the VL arbitration tables of switch and host ports, the
traffic classes with their SL and VL, the partitions), each switch's transmit
scheduler as it ended up (the embedded switch arbitrates between VLs as
InfiniBand does; real bmv2 has no such scheduler, its priority queues are
strict, and the run says so per switch), per-class bandwidth over time, the
compared policies (`gradient_share_of_solo`, `checkpoint_share`) and the
partition figures (`cross_partition_delivered`, `pkey` drops).
"""

from __future__ import annotations

import matplotlib.pyplot as plt

from traffic.metrics import RunMetrics
from traffic.report_model import Figure, Note, ReportInputError, RunFiles, Section, Table, cell, png

BMV2_NOTE = ("Real bmv2 (simple_switch_grpc) has no VL arbitration: its priority queues "
             "are strict (the highest class first), so on bmv2 only the NICs arbitrate "
             "by weight.")


def qos_section(run: RunFiles) -> Section:
    m: RunMetrics = run.need("metrics")
    q = m.qos
    if not q and not m.arbitration:
        raise ReportInputError("this run has no partitions or QoS (scenario [qos])")
    section = Section("Partitions and QoS")
    q = q or {}
    policy = q.get("policy")
    if policy:
        section.blocks.append(_arbitration_table(policy))
        section.blocks.append(_classes_table(policy))
    schedulers = {sw: s.get("scheduler") for sw, s in (q.get("schedulers") or {}).items()
                  if s.get("scheduler")}
    if schedulers:
        reasons = {s.get("reason") for s in q["schedulers"].values() if s.get("reason")}
        section.blocks.append(Note("Transmit scheduling per switch: " + ", ".join(
            f"{sw} {kind}" for sw, kind in sorted(schedulers.items()))
            + (f" ({'; '.join(sorted(reasons))})" if reasons else "") + ". " + BMV2_NOTE))
    if m.arbitration:
        rows = tuple((label, s.policy_file, cell(s.cct_ms), cell(s.gradient_share_of_solo),
                      cell(s.checkpoint_share), cell(s.checkpoint_frames), s.verdict)
                     for label, s in m.arbitration.items())
        section.blocks.append(Note(f"Solo run of [traffic]: CCT {cell(m.solo_cct_ms)} ms "
                                   f"(`{m.solo_run}`)."))
        section.blocks.append(Table(("setting", "policy", "cct_ms", "gradient_share_of_solo",
                                     "checkpoint_share", "checkpoint_frames", "verdict"), rows))
    elif m.solo_cct_ms is not None:
        section.blocks.append(Note(f"Against its solo run: CCT {cell(m.cct_ms)} ms vs "
                                   f"{cell(m.solo_cct_ms)} ms, share_of_solo "
                                   f"{cell(m.share_of_solo)}."))
    if q.get("partitions"):
        rows = tuple((p["name"], p["pkey"], ", ".join(f"{h} ({mship})" for h, mship in
                                                       p["members"].items()))
                     for p in q["partitions"])
        section.blocks.append(Table(("partition", "P_Key", "members"), rows))
        section.blocks.append(Note(
            f"cross_partition_delivered: {cell(m.cross_partition_delivered)} (DATA frames "
            f"in the hosts' captures from a sender outside their partitions); pkey drops: "
            f"{cell(m.pkey_drops)} ({', '.join(f'{k}: {v}' for k, v in sorted((q.get('pkey_drops_by_port') or {}).items())) or 'none'})."))
    bandwidth = q.get("class_bandwidth")
    if bandwidth and bandwidth.get("bytes_per_s"):
        section.blocks.append(_bandwidth_figure(bandwidth, q.get("share_window_ns"),
                                                m.traffic_start_ns))
    return section


def _arbitration_table(policy: dict) -> Table:
    rows = []
    for kind, label in (("swe", "switch ports"), ("ca", "host ports (NIC)")):
        p = policy[kind]
        rows.append((label, _entries(p["high"]), _entries(p["low"]),
                     "unbounded" if p["high_limit"] == 255 else f"{p['high_limit']} x 4 KiB",
                     str(p["max_vls"])))
    return Table(("ports", "high (VL:weight x 64 B)", "low (VL:weight x 64 B)", "high limit",
                  "VLs"), tuple(rows))


def _classes_table(policy: dict) -> Table:
    sl2vl = policy["ca"]["sl2vl"]
    return Table(("traffic class", "SL", "VL"), tuple(
        (name, str(sl), str(sl2vl[sl])) for name, sl in sorted(policy["classes"].items(),
                                                                 key=lambda kv: kv[1])))


def _entries(entries: list) -> str:
    return ", ".join(f"{vl}:{w}" for vl, w in entries) or "-"


def _bandwidth_figure(bandwidth: dict, window, start_ns: int | None) -> Figure:
    bin_s = bandwidth["bin_ms"] / 1e3
    fig, ax = plt.subplots(figsize=(7, 3))
    for name, series in sorted(bandwidth["bytes_per_s"].items()):
        ax.step([i * bin_s for i in range(len(series))], [v / 1e3 for v in series],
                where="post", label=name)
    if window and start_ns:
        ax.axvspan((window[0] - start_ns) / 1e9, (window[1] - start_ns) / 1e9, alpha=0.1,
                   color="tab:gray", label="collective")
    ax.set_xlabel("time since traffic start (s)")
    ax.set_ylabel("delivered (kB/s)")
    ax.set_title("Bandwidth per traffic class")
    ax.legend(fontsize=7)
    return Figure("class_bandwidth", png(fig), f"delivered DATA bytes per class, "
                                                f"{bandwidth['bin_ms']:.0f} ms bins")
