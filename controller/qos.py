"""The SM's QoS steps on one switch: partitions (P_Key enforcement at host-facing
ports, from partitions.conf, controller/partitions.py) and SL -> VL tables,
per-class transmit queues and VL arbitration (from the QoS policy file,
controller/qos_policy.py).

`install_partitions`: `FabricIngress.pkey_enforce`'s default action gets the mask
of the switch's host-facing ports; `pkey_in` and `pkey_out` get, for each such
port, one entry per partition the host is a member of (P_Key base -> full).
A host in no partition gets no entries: all its data frames are dropped.

`install_qos`:
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
from controller.partitions import Partitions
from controller.qos_policy import QosPolicy
from topologies.description import Fabric

SL_TABLE = "FabricIngress.sl_to_vl"
SL_KEY = "hdr.lrh.sl"
SL_ACTION = "FabricIngress.set_vl"
TX_QUEUES_TABLE = "FabricIngress.tx_queues"
TX_QUEUES_ACTION = "FabricIngress.set_tx_queues"

PKEY_ENFORCE_TABLE = "FabricIngress.pkey_enforce"
PKEY_TABLES = ("FabricIngress.pkey_in", "FabricIngress.pkey_out")
PKEY_KEYS = {"FabricIngress.pkey_in": "standard_metadata.ingress_port",
             "FabricIngress.pkey_out": "standard_metadata.egress_spec"}

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


def install_partitions(conn: SwitchConnection, host_ports: dict[int, str],
                       partitions: Partitions) -> int:
    """Enforce partitions at the switch's host-facing ports (port -> host name);
    returns the number of P_Key table entries written."""
    info = conn.p4info
    updates = []
    for table in PKEY_TABLES:
        for port, host in sorted(host_ports.items()):
            for base, full in sorted(partitions.port_table(host).items()):
                updates.append(conn.insert(info.table_entry(
                    table, {PKEY_KEYS[table]: port, "meta.pkey_base": base},
                    "FabricIngress.pkey_member", {"full": int(full)})))
    mask = sum(1 << port for port in host_ports)
    default = info.table_entry(PKEY_ENFORCE_TABLE, {}, "FabricIngress.set_pkey_ports",
                               {"ports": mask})
    default.is_default_action = True
    # the tables first: a port is enforced only once it knows its partitions
    conn.write(updates)
    conn.write([conn.modify(default)])
    return len(updates)


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


def configure_fabric(sm, fabric: Fabric, policy: QosPolicy | None,
                     partitions: Partitions | None, class_queues: bool) -> dict[str, dict]:
    """Both steps on every switch (the SM's bring-up); per switch what it ended up with:
    {"scheduler", "ports", "reason", "pkey_entries"}. Keeps `partitions` on the SM, for
    the SA."""
    sm.partitions = partitions
    hosts = {h.name for h in fabric.hosts}

    def one(name: str, conn: SwitchConnection) -> dict:
        ports, host_ports = [], {}
        for link in fabric.links_of(name):
            port, peer, _peer_port = link.endpoint(name)
            ports.append(port)
            if peer in hosts:
                host_ports[port] = peer
        out: dict = {"pkey_entries": 0}
        if partitions is not None:
            out["pkey_entries"] = install_partitions(conn, host_ports, partitions)
        if policy is not None:
            out.update(install_qos(conn, ports, policy, class_queues).as_dict())
        return out

    return sm._on_all("partitions and QoS", one)
