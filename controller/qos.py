"""The SM's QoS step: SL -> VL tables, per-class transmit queues and VL arbitration
on every switch, from the QoS policy file (controller/qos_policy.py).

Per switch:
* `FabricIngress.sl_to_vl`: the policy's `qos_swe_sl2vl` for every SL that maps
  away from VL 0 (VL 0 is the table's default);
* `FabricIngress.tx_queues`: set_tx_queues(1), data frames queue by class
  (standard_metadata.priority = VL); only when the switches were started with
  one priority queue per VL (`--priority-queues 8`), which the caller says;
* the VL arbitration table of every port that has a link, as the embedded
  switch's extern entry (traffic/vl_arbitration.py). simple_switch_grpc has no
  such scheduler and refuses it (UNIMPLEMENTED): its priority queues stay
  strict, and the result says so per switch.
"""

from __future__ import annotations

from dataclasses import dataclass

from controller.p4info import decode
from controller.p4runtime_client import SwitchConnection, SwitchWriteError
from controller.qos_policy import QosPolicy

SL_TABLE = "FabricIngress.sl_to_vl"
SL_KEY = "hdr.lrh.sl"
SL_ACTION = "FabricIngress.set_vl"
TX_QUEUES_TABLE = "FabricIngress.tx_queues"
TX_QUEUES_ACTION = "FabricIngress.set_tx_queues"

SCHEDULER_ARBITRATION = "vl_arbitration"
SCHEDULER_STRICT = "strict_priority"


@dataclass(frozen=True)
class SwitchQos:
    """What one switch's transmit scheduling ended up as."""

    scheduler: str  # SCHEDULER_ARBITRATION or SCHEDULER_STRICT
    ports: tuple[int, ...]  # ports given the table
    reason: str = ""  # why strict priority, when it is

    def as_dict(self) -> dict:
        return {"scheduler": self.scheduler, "ports": list(self.ports), "reason": self.reason}


def install_qos(conn: SwitchConnection, ports: list[int], policy: QosPolicy,
                class_queues: bool) -> SwitchQos:
    """Configure one switch (see the module doc)."""
    info = conn.p4info
    have = {decode(e.match[0].exact.value): e for e in conn.read_table_entries(SL_TABLE)}
    updates = []
    for sl, vl in enumerate(policy.swe.sl2vl):
        if vl == 0 and sl not in have:
            continue
        entry = info.table_entry(SL_TABLE, {SL_KEY: sl}, SL_ACTION, {"vl": vl})
        updates.append(conn.modify(entry) if sl in have else conn.insert(entry))
    if class_queues:
        default = info.table_entry(TX_QUEUES_TABLE, {}, TX_QUEUES_ACTION, {"per_class": 1})
        default.is_default_action = True
        updates.append(conn.modify(default))
    conn.write(updates)
    if not class_queues:
        return SwitchQos(SCHEDULER_STRICT, (), "one transmit queue per port "
                                               "(switches not started with --priority-queues 8)")
    try:
        conn.write([conn.vl_arbitration_update(port, policy.swe.arbitration)
                    for port in sorted(ports)])
    except SwitchWriteError as exc:
        if all(code == "UNIMPLEMENTED" for _what, code, _msg in exc.failures):
            return SwitchQos(SCHEDULER_STRICT, (), "the target has no VL arbitration "
                             "(bmv2: strict priority queues)")
        raise
    return SwitchQos(SCHEDULER_ARBITRATION, tuple(sorted(ports)))
