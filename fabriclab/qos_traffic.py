"""Partitions and QoS in the traffic stage: what the NICs' FLOWS.json gain.

The collective's files (traffic/collectives.py) are written first; then, per NIC:

* every flow of [traffic] goes on the SL of its traffic class (the QoS policy);
* every flow carries the P_Key of the partition its sender shares with its
  receiver (controller/partitions.py), or, where they share none, the sender's
  own first partition: the frame a misbehaving job would send, which the switch
  at the edge must drop;
* the port's VL arbitration table, SL -> VL and the VLs it announces credits for
  (the policy's `qos_ca_*`);
* [[background]] traffic: sender i of an entry sends `frames` frames to
  receiver i mod len(dst) per burst, flow id BACKGROUND_FLOW_BASE + entry x 1000
  + sender x 100 + burst, coll_id BACKGROUND_COLL_BASE + entry (so that no
  collective figure counts it); the receiver expects them (it keeps running
  until they arrived) only where the partitions let them through.
"""

from __future__ import annotations

import json
from pathlib import Path

from controller.partitions import DEFAULT_PKEY, FULL_BIT, Partitions
from fabriclab.qos_plan import QosPlan
from traffic.addressing import SA_ADDRESSES, names_in, wants_sa

BACKGROUND_FLOW_BASE = 50000
BACKGROUND_COLL_BASE = 60000


def pkey_between(partitions: Partitions | None, src: str, dst: str) -> int:
    if partitions is None:
        return DEFAULT_PKEY
    pkey = partitions.pkey_for(src, dst)
    if pkey is not None:
        return pkey
    own = sorted(partitions.port_table(src).items())
    if not own:
        return DEFAULT_PKEY
    base, full = own[0]
    return base | (FULL_BIT if full else 0)


def background_flow_id(entry: int, sender: int, burst: int) -> int:
    return BACKGROUND_FLOW_BASE + entry * 1000 + sender * 100 + burst


def apply_qos(qos: QosPlan, flow_files: dict[str, Path], book: dict[str, dict],
              payload: int, flows_dir: Path) -> dict[str, dict]:
    """Rewrite the NICs' FLOWS.json in place (adding files for background-only hosts);
    returns the class of every flow id, for the metrics: {flow: {"class", "src", "dst"}}."""
    files = {h: json.loads(p.read_text()) for h, p in flow_files.items()}
    name_of_lid = {entry["lid"]: h for h, entry in book.items()}
    classes: dict[str, dict] = {}
    for host, data in files.items():
        for flow in data["flows"]:
            dst = flow.get("dst") or name_of_lid.get(flow.get("dlid"), "")
            flow["sl"] = qos.traffic_sl
            flow["pkey"] = pkey_between(qos.partitions, host, dst)
            classes[str(flow["flow"])] = {"class": qos.traffic_class, "src": host, "dst": dst}
        if wants_sa(data):  # ACKs to every peer on the class's SL (traffic/addressing.py)
            data["peer_sl"] = {name: qos.traffic_sl for name in names_in(data)}
        else:
            data["sl_of_lid"] = {lid: qos.traffic_sl for lid in data.get("sl_of_lid", {})}
    for i, bg in enumerate(qos.background):
        for s, src in enumerate(bg.src):
            dst = bg.dst[s % len(bg.dst)]
            sender = files.setdefault(src, _empty(src, book))
            receiver = files.setdefault(dst, _empty(dst, book))
            pkey = pkey_between(qos.partitions, src, dst)
            allowed = qos.partitions is None or qos.partitions.pkey_for(src, dst) is not None
            for burst in range(bg.spec.bursts):
                flow = background_flow_id(i, s, burst)
                # a peer the SA serves is named; one outside the sender's partitions
                # gets no path from the SA: the intruder forges the address
                where = {"dst": dst} if allowed else {"dst_mac": book[dst]["mac"],
                                                      "dlid": book[dst]["lid"]}
                sender["flows"].append({
                    "flow": flow, **where,
                    "sl": bg.sl, "pkey": pkey, "count": bg.spec.frames,
                    "payload": bg.spec.payload_bytes or payload,
                    "coll_id": BACKGROUND_COLL_BASE + i, "step": burst,
                    "start_s": bg.spec.start_s + burst * bg.spec.interval_s})
                classes[str(flow)] = {"class": bg.spec.traffic_class, "src": src, "dst": dst}
                if allowed:
                    receiver["recvs"].append({"coll_id": BACKGROUND_COLL_BASE + i,
                                              "step": burst, "src": src,
                                              "frames": bg.spec.frames})
    policy = qos.policy
    for host, data in files.items():
        if policy is not None:
            data["vl_arbitration"] = policy.ca.arbitration.as_dict()
            data["sl_to_vl"] = list(policy.ca.sl2vl)
            data["vls"] = list(range(policy.ca.max_vls))
        path = flows_dir / f"{host}.flows.json"
        path.write_text(json.dumps(data, indent=1) + "\n")
        flow_files[host] = path
    return classes


def _empty(host: str, book: dict[str, dict]) -> dict:
    """A background-only host's FLOWS.json: its addresses come from the SA."""
    return {"name": host, "addresses": SA_ADDRESSES, "flows": [], "recvs": []}
