"""Setting a switch's flow-control mode and parameters at run time (never by recompiling).

The contract with p4src/fabric.p4 (docs/fabric.md):
* `FabricIngress.fc_config`: a keyless table whose default action
  `set_fc_mode(mode, xoff, xon, headroom, credit_limit, credit_coalesce,
  hoq_lifetime_us, watchdog_detect_us, watchdog_restore_us)` the SM modifies;
* `FabricIngress.port_config`: per ingress port, `set_port(pause_quantum_ns)`,
  one 802.1Qbb quantum (512 bit times) at that link's emulated rate;
* clone session `FC_SESSION_BASE + port` sends flow-control frames (pauses,
  credits) out of `port` (the base is the program's own,
  controller/program_constants.py);
* `FabricIngress.egress_config`: per egress port, `set_egress_limit(limit)`, in
  LOSSY mode the most data frames queued towards that port before the program
  tail-drops (and counts) them; the link's buffer.
* the hold loop, on real bmv2 only (`hold_loop=True`; p4src/include/hold_loop.p4):
  `FabricIngress.hold_loop_config`'s default action `set_hold_loop(1)` and clone
  session `HOLD_SESSION` -> `HOLD_OUT_PORT`, so that held frames wait round the
  run's hold loop (topologies/hold_loop.py) instead of recirculating.
* the link pacer, where the links are shaped after the pipeline (tc on bmv2
  without Thrift; `pace`): `FabricEgress.egress_pace`, per egress port,
  `set_pace(frame_ns, bound_ns)`: one frame time at the link's rate and the most
  backlog (in ns of link time) the transmit gate lets build up beyond it.

Only tables, their default entries and clone sessions are written: never a
register, because bmv2's P4Runtime server does not implement register writes
(UNIMPLEMENTED), and the embedded switch refuses them the same way.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from p4.v1 import p4runtime_pb2

from controller.p4runtime_client import SwitchConnection
from controller.program_constants import ProgramConstants

FC_CONFIG_TABLE = "FabricIngress.fc_config"
FC_CONFIG_ACTION = "FabricIngress.set_fc_mode"
PORT_CONFIG_TABLE = "FabricIngress.port_config"
PORT_CONFIG_ACTION = "FabricIngress.set_port"
EGRESS_CONFIG_TABLE = "FabricIngress.egress_config"
EGRESS_CONFIG_ACTION = "FabricIngress.set_egress_limit"
HOLD_LOOP_TABLE = "FabricIngress.hold_loop_config"
HOLD_LOOP_ACTION = "FabricIngress.set_hold_loop"
EGRESS_PACE_TABLE = "FabricEgress.egress_pace"
EGRESS_PACE_ACTION = "FabricEgress.set_pace"


class Mode(enum.IntEnum):
    LOSSY = 0
    PFC = 1
    CREDIT = 2


@dataclass(frozen=True)
class FlowControlParams:
    mode: Mode = Mode.LOSSY
    xoff: int = 0  # PFC, packets per (ingress port, priority)
    xon: int = 0
    headroom: int = 0
    credit_limit: int = 0  # CREDIT: receive buffer per (input port, VL) in packets
    credit_coalesce: int = 1
    hoq_lifetime_us: int = 0  # 0 = never discard
    watchdog_detect_us: int = 0  # 0 = no PFC watchdog
    watchdog_restore_us: int = 0


@dataclass(frozen=True)
class LinkPace:
    """One link's pacer: a frame time and the backlog bound, both in ns of link time."""
    frame_ns: int
    bound_ns: int

    @classmethod
    def at(cls, rate_pps: float, bound_frames: int) -> LinkPace:
        """A link of rate_pps frames/s whose gate lets at most bound_frames wait beyond it."""
        if rate_pps <= 0 or bound_frames < 1:
            raise ValueError(f"link pacer: rate {rate_pps} frames/s and bound {bound_frames} "
                             "frames must both be positive")
        frame_ns = round(1e9 / rate_pps)
        return cls(frame_ns, frame_ns * bound_frames)


def pace_bound_frames(params: FlowControlParams) -> int:
    """The backlog a paced PFC link may hold after the gate: a quarter of the headroom, so
    that the headroom covers it and the frames the upstream still lets through while the
    pause reaches it (on bmv2 under the suite's load: up to 24 frames at 300 frames/s
    with half the headroom as the bound, once more than the headroom; docs/fabric.md)."""
    return max(1, params.headroom // 4)


def clone_session(session_id: int, port: int) -> p4runtime_pb2.Update:
    """INSERT clone session `session_id` -> `port` (class of service 0, no truncation)."""
    session = p4runtime_pb2.Update(type=p4runtime_pb2.Update.INSERT)
    clone = session.entity.packet_replication_engine_entry.clone_session_entry
    clone.session_id = session_id
    clone.replicas.add(egress_port=port, instance=1)
    return session


def hold_loop_updates(conn: SwitchConnection, constants: ProgramConstants
                      ) -> list[p4runtime_pb2.Update]:
    """The writes that send a switch's held frames round its hold loop."""
    if not constants.has_hold_loop:
        raise ValueError(f"switch {conn.name}: the program has no hold loop "
                         f"(FabricConst lacks HOLD_OUT_PORT, HOLD_IN_PORT, HOLD_SESSION)")
    default = conn.p4info.table_entry(HOLD_LOOP_TABLE, {}, HOLD_LOOP_ACTION, {"on": 1})
    default.is_default_action = True
    return [SwitchConnection.modify(default),
            clone_session(constants.hold_session, constants.hold_out_port)]


def updates(conn: SwitchConnection, params: FlowControlParams,
            pause_quantum_ns: dict[int, int], queue_limit: dict[int, int] | None = None,
            *, constants: ProgramConstants, hold_loop: bool = False,
            pace: dict[int, LinkPace] | None = None) -> list[p4runtime_pb2.Update]:
    """The writes that put one switch in `params`' mode, for its wired ports;
    `constants`: the pushed program's (its clone session base); `hold_loop`: the
    switch has a hold loop wired (real bmv2), held frames wait round it; `pace`: per
    egress port, its link pacer (links shaped after the pipeline)."""
    p4info = conn.p4info
    if p4info is None:
        raise ValueError(f"switch {conn.name}: no pipeline yet (push it before flow control)")
    out = []
    default = p4info.table_entry(FC_CONFIG_TABLE, {}, FC_CONFIG_ACTION, {
        "mode": int(params.mode), "xoff": params.xoff, "xon": params.xon,
        "headroom": params.headroom, "credit_limit": params.credit_limit,
        "credit_coalesce": max(1, params.credit_coalesce),
        "hoq_lifetime_us": params.hoq_lifetime_us,
        "watchdog_detect_us": params.watchdog_detect_us,
        "watchdog_restore_us": params.watchdog_restore_us})
    default.is_default_action = True
    out.append(SwitchConnection.modify(default))
    for port, quantum in sorted(pause_quantum_ns.items()):
        entry = p4info.table_entry(PORT_CONFIG_TABLE, {"standard_metadata.ingress_port": port},
                                   PORT_CONFIG_ACTION, {"pause_quantum_ns": max(1, quantum)})
        out.append(SwitchConnection.insert(entry))
        out.append(clone_session(constants.fc_session_base + port, port))
    for port, limit in sorted((queue_limit or {}).items()):
        entry = p4info.table_entry(EGRESS_CONFIG_TABLE, {"standard_metadata.egress_spec": port},
                                   EGRESS_CONFIG_ACTION, {"limit": limit})
        out.append(SwitchConnection.insert(entry))
    for port, link in sorted((pace or {}).items()):
        entry = p4info.table_entry(EGRESS_PACE_TABLE, {"standard_metadata.egress_port": port},
                                   EGRESS_PACE_ACTION, {"frame_ns": link.frame_ns,
                                                        "bound_ns": link.bound_ns})
        out.append(SwitchConnection.insert(entry))
    if hold_loop:
        out += hold_loop_updates(conn, constants)
    return out


def configure(conn: SwitchConnection, params: FlowControlParams,
              pause_quantum_ns: dict[int, int], queue_limit: dict[int, int] | None = None,
              *, constants: ProgramConstants, hold_loop: bool = False,
              pace: dict[int, LinkPace] | None = None) -> None:
    conn.write(updates(conn, params, pause_quantum_ns, queue_limit, constants=constants,
                       hold_loop=hold_loop, pace=pace))
