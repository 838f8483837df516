"""The metrics stage's part for partitions and QoS (traffic/qos_metrics.py computes).

Figures, as RunMetrics fields: `qos` (the arbitration configuration as installed,
each switch's transmit scheduler, the partitions, per-class bandwidth over time,
each class's share of the ranks' transmissions while the collective ran),
`checkpoint_share` (that share for the background classes together),
`cross_partition_delivered` and `pkey_drops` (with partitions).
"""

from __future__ import annotations

from controller.bringup import Bringup
from controller.readout import Readout
from fabriclab.plan import RunPlan
from fabriclab.traffic_run import TrafficRun
from traffic import qos_metrics
from traffic.frames import DATA_HEADER_LEN

BIN_MS = 100.0


def measure_qos(plan: RunPlan, bringup: Bringup, traffic: TrafficRun, readout: Readout,
                metrics: dict) -> dict:
    qos = plan.qos
    if qos is None or traffic.flow_classes is None:
        return {}
    classes = traffic.flow_classes
    start_ns = int(traffic.start_at * 1e9)
    end_ns = int(traffic.end_at * 1e9)
    payload = plan.scenario.traffic.payload_bytes
    sizes = {qos.traffic_class: DATA_HEADER_LEN + payload}
    for b in qos.background:
        sizes.setdefault(b.spec.traffic_class, DATA_HEADER_LEN + (b.spec.payload_bytes or payload))
    # the window the collective ran in: where the classes compete
    window = _collective_window(metrics) or (start_ns, end_ns)
    share = qos_metrics.class_share(traffic.sent_logs, classes, plan.ranks, *window)
    out: dict = {"qos": {
        "policy_file": qos.policy_file or None,
        "policy": qos.policy.as_dict() if qos.policy else None,
        "schedulers": bringup.qos,
        "traffic_class": qos.traffic_class,
        "partitions": qos.partitions.as_dict() if qos.partitions else None,
        "class_bandwidth": qos_metrics.class_bandwidth(traffic.recv_logs, classes, start_ns,
                                                       end_ns, BIN_MS, sizes),
        "class_share": share,
        "share_window_ns": list(window),
        "frame_bytes": sizes,
    }}
    if qos.background and qos.policy is not None:
        background = {b.spec.traffic_class for b in qos.background} - {qos.traffic_class}
        out["checkpoint_share"] = round(sum(share.get(c, 0.0) for c in background), 4)
    if qos.partitions is not None:
        parts = qos.partitions
        host_of_lid = {lid: h for h, lid in bringup.lids.items()}
        cross = qos_metrics.cross_partition(
            traffic.pcaps, host_of_lid, lambda a, b: parts.pkey_for(a, b) is not None)
        drops = qos_metrics.pkey_drops(readout.drops)
        out["qos"]["cross_partition"] = cross
        out["qos"]["pkey_drops_by_port"] = drops["by_port"]
        out["cross_partition_delivered"] = cross["delivered"]
        out["pkey_drops"] = drops["total"]
    return out


def _collective_window(metrics: dict) -> tuple[int, int] | None:
    colls = [c for c in (metrics.get("collectives") or {}).values()]
    starts = [c.start_ns for c in colls if c.start_ns is not None]
    ends = [c.end_ns for c in colls if c.end_ns is not None]
    if not starts or not ends:
        return None
    return min(starts), max(ends)
