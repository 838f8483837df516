"""A small harness that runs fabric.p4 in the embedded switch, configured the way
the SM configures it, and builds the frames the tests send."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from scapy.layers.l2 import Ether

from controller import program_constants
from traffic.frames import APP, BTH, CREDIT, ETHERTYPE_FABRIC, LRH, NOTIFY, Kind

FABRIC_P4 = Path(__file__).resolve().parents[2] / "p4src" / "fabric.p4"

# fabric.p4's own (its FabricConst enum), as the SM reads them from the compiled program
_CONSTANTS = program_constants.fabric_p4()
CPU_PORT = _CONSTANTS.cpu_port
FC_SESSION_BASE = _CONSTANTS.fc_session_base
NOTIFY_GROUP = _CONSTANTS.notify_group
PORTS = (1, 2, 3, 4)
FC_LOSSY, FC_PFC, FC_CREDIT = 0, 1, 2


@dataclass
class FcConfig:
    """The arguments of FabricIngress.set_fc_mode, in order."""

    mode: int = FC_LOSSY
    xoff: int = 0
    xon: int = 0
    headroom: int = 0
    credit_limit: int = 0
    credit_coalesce: int = 1
    hoq_lifetime_us: int = 0
    watchdog_detect_us: int = 0
    watchdog_restore_us: int = 0

    def args(self) -> tuple[int, ...]:
        return (self.mode, self.xoff, self.xon, self.headroom, self.credit_limit,
                self.credit_coalesce, self.hoq_lifetime_us, self.watchdog_detect_us,
                self.watchdog_restore_us)


class Fabric:
    """One switch running fabric.p4, configured the way the SM does it."""

    def __init__(self, bmv2_json: dict, ports: dict[int, str] | None = None,
                 priority_queues: int = 1):
        from p4switch.runtime_api import ActionCall, Replica
        from p4switch.switch import Switch

        self._ActionCall = ActionCall
        self.constants = program_constants.of_program(bmv2_json)
        self.sw = Switch(ports=ports or {}, cpu_port=self.constants.cpu_port,
                         priority_queues=priority_queues)
        self.sw.load_program(bmv2_json)
        for port in PORTS:
            self.sw.clone_session_set(self.constants.fc_session_base + port, [Replica(port)])

    def route(self, dlid: int, port: int, backup: int | None = None) -> None:
        from p4switch.runtime_api import MatchKind, MatchParam

        key = [MatchParam(MatchKind.EXACT, dlid)]
        if backup is None:
            call = self._ActionCall("FabricIngress.forward", (port,))
        else:
            call = self._ActionCall("FabricIngress.forward_frr", (port, backup))
        self.sw.table_add("FabricIngress.dlid_route", key, call)

    def sl_to_vl(self, sl: int, vl: int) -> None:
        from p4switch.runtime_api import MatchKind, MatchParam

        self.sw.table_add("FabricIngress.sl_to_vl", [MatchParam(MatchKind.EXACT, sl)],
                          self._ActionCall("FabricIngress.set_vl", (vl,)))

    def set_mode(self, config: FcConfig) -> None:
        self.sw.table_set_default("FabricIngress.fc_config",
                                  self._ActionCall("FabricIngress.set_fc_mode", config.args()))

    def ports_down(self, *ports: int) -> None:
        """What the local agent writes: port_liveness's mask, these ports down."""
        mask = sum(1 << p for p in set(ports))
        self.sw.table_set_default("FabricIngress.port_liveness",
                                  self._ActionCall("FabricIngress.set_ports_down", (mask,)))

    def notify(self, ports: tuple[int, ...], epoch: int, queue: int = 0) -> None:
        """What the SM writes: notify_config's ports (NOTIFY sent and taken), epoch and
        egress queue, and the multicast group NOTIFY frames are flooded to (those ports)."""
        from p4switch.runtime_api import Replica

        self.sw.mc_group_set(self.constants.notify_group, [Replica(p, 1) for p in sorted(ports)])
        mask = sum(1 << p for p in set(ports))
        self.sw.table_set_default("FabricIngress.notify_config",
                                  self._ActionCall("FabricIngress.set_notify", (mask, epoch, queue)))

    def hold_loop(self) -> None:
        """What the SM writes on bmv2: held frames go round the hold loop
        (hold_loop_config on, clone session HOLD_SESSION -> HOLD_OUT_PORT)."""
        from p4switch.runtime_api import Replica

        c = self.constants
        self.sw.clone_session_set(c.hold_session, [Replica(c.hold_out_port)])
        self.sw.table_set_default("FabricIngress.hold_loop_config",
                                  self._ActionCall("FabricIngress.set_hold_loop", (1,)))

    def pause_quantum(self, port: int, ns: int) -> None:
        from p4switch.runtime_api import MatchKind, MatchParam

        self.sw.table_add("FabricIngress.port_config", [MatchParam(MatchKind.EXACT, port)],
                          self._ActionCall("FabricIngress.set_port", (ns,)))

    def link_pace(self, port: int, frame_ns: int, bound_ns: int) -> None:
        """What the SM writes where links are shaped after the pipeline (tc on bmv2)."""
        from p4switch.runtime_api import MatchKind, MatchParam

        self.sw.table_add("FabricEgress.egress_pace", [MatchParam(MatchKind.EXACT, port)],
                          self._ActionCall("FabricEgress.set_pace", (frame_ns, bound_ns)))

    def partition_ports(self, tables: dict[int, dict[int, bool]]) -> None:
        """What the SM installs from partitions.conf: these host-facing ports check
        P_Keys; each port's table maps a P_Key base to full membership."""
        from p4switch.runtime_api import MatchKind, MatchParam

        mask = sum(1 << p for p in tables)
        self.sw.table_set_default("FabricIngress.pkey_enforce",
                                  self._ActionCall("FabricIngress.set_pkey_ports", (mask,)))
        for port, table in tables.items():
            for base, full in table.items():
                key = [MatchParam(MatchKind.EXACT, port), MatchParam(MatchKind.EXACT, base)]
                call = self._ActionCall("FabricIngress.pkey_member", (int(full),))
                self.sw.table_add("FabricIngress.pkey_in", key, call)
                self.sw.table_add("FabricIngress.pkey_out", key, call)

    def send(self, port: int, frame) -> list[tuple[int, bytes]]:
        return self.sw.process(port, bytes(frame))

    def register(self, name: str, index: int) -> int:
        return self.sw.register_read(name, index)

    def counter(self, name: str, index: int) -> tuple[int, int]:
        """(bytes, packets)."""
        return self.sw.counter_read(name, index)


def data_frame(dlid: int, psn: int = 0, sl: int = 0, vl: int = 0, flow: int = 1,
               payload: bytes = b"x" * 32, pkey: int = 0xFFFF):
    return (Ether(dst="02:00:00:00:00:aa", src="02:00:00:00:00:bb", type=ETHERTYPE_FABRIC)
            / LRH(vl=vl, sl=sl, kind=int(Kind.DATA), dlid=dlid, slid=7)
            / BTH(opcode=4, pkey=pkey, dest_qp=1, psn=psn) / APP(flow_id=flow) / payload)


def credit_frame(vl: int, fccl: int, fctbs: int = 0, op: int = 0):
    return (Ether(dst="ff:ff:ff:ff:ff:ff", src="02:00:00:00:00:cc", type=ETHERTYPE_FABRIC)
            / LRH(vl=vl, kind=int(Kind.CREDIT)) / CREDIT(op=op, fctbs=fctbs, vl=vl, fccl=fccl))


def psn_of(frame: bytes) -> int:
    return Ether(frame)[BTH].psn


def notify_frame(dlid: int, epoch: int):
    """A neighbour's NOTIFY: `dlid` is unreachable through it."""
    return (Ether(dst="ff:ff:ff:ff:ff:ff", src="02:00:00:00:00:dd", type=ETHERTYPE_FABRIC)
            / LRH(kind=int(Kind.NOTIFY), dlid=dlid) / NOTIFY(op=1, epoch=epoch))
