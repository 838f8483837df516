"""Reading the switches' state after a run, over P4Runtime: drops by reason, telemetry,
and the flow-control state that says what a switch still holds.

A switch that cannot answer (killed by a fault, crashed) loses its own figures, never
the run's: it is listed in `Readout.unreadable` (drops) or as {"error": why}
(telemetry).
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TypeVar

from controller.program_layout import layout
from topologies.description import Fabric

# fabric.p4's telemetry (telemetry.p4), per (port, class): counters give packets
TELEMETRY_COUNTERS = ("class_tx", "class_rx", "pause_tx", "pause_rx", "credit_tx", "credit_rx")
TELEMETRY_REGISTERS = ("blocked_ns", "buffer_peak")
# fabric.p4's flow-control state: frames in receive buffers, tickets at transmit gates
FC_STATE_REGISTERS = ("fc_buffer", "fc_queue_head", "fc_queue_tail")

Drops = dict[tuple[int, str], tuple[int, int]]  # (port, reason) -> (packets, bytes)
T = TypeVar("T")


@dataclass(frozen=True)
class Readout:
    drops: dict[str, Drops]  # per switch that answered
    unreadable: dict[str, str]  # switch -> why its drop counters could not be read
    telemetry: dict[str, dict]  # {switch: {port: {name: [one value per class]}}}


def on_every_switch(fabric: Fabric, work: Callable[[str], T]) -> dict[str, T | Exception]:
    """`work(switch)` on every switch at once; an exception is that switch's result."""
    def guarded(name: str):
        try:
            return work(name)
        except Exception as exc:  # noqa: BLE001 - one dead switch must not lose the run
            return exc

    names = [sw.name for sw in fabric.switches]
    with ThreadPoolExecutor(max_workers=min(16, len(names))) as pool:
        return dict(zip(names, pool.map(guarded, names)))


def read_drops(sm, fabric: Fabric) -> tuple[dict[str, Drops], dict[str, str]]:
    """(drop counters per switch, switches that could not answer and why)."""
    results = on_every_switch(fabric, sm.read_drop_counters)
    for name in [n for n, r in results.items() if isinstance(r, Exception)]:
        # a switch still busy forwarding may miss the deadline when all are asked at
        # once on a loaded machine: once more, alone
        try:
            results[name] = sm.read_drop_counters(name)
        except Exception as exc:  # noqa: BLE001 - one dead switch must not lose the run
            results[name] = exc
    return ({n: r for n, r in results.items() if not isinstance(r, Exception)},
            {n: str(r) for n, r in results.items() if isinstance(r, Exception)})


def read_telemetry(connections: dict, fabric: Fabric, num_classes: int) -> dict[str, dict]:
    """Per switch, per wired port, per class: the telemetry and flow-control state.

    {switch: {port: {name: [num_classes values]}}}; a switch that cannot answer, or a
    program without these counters, gives {"error": why}. Registers a switch cannot
    read (bmv2's P4Runtime server: UNIMPLEMENTED) leave the counters, and say so in
    each port's "registers_unread"."""
    def read(name: str) -> dict:
        conn = connections[name]
        ports = [p for p, _peer, _pp in fabric.neighbours(name)]
        indices = [p * num_classes + c for p in ports for c in range(num_classes)]
        out: dict = {str(p): {} for p in ports}
        for counter in TELEMETRY_COUNTERS:
            cells = conn.read_counters(counter, indices=indices)
            for p in ports:
                out[str(p)][counter] = [cells.get(p * num_classes + c, (0, 0))[0]
                                        for c in range(num_classes)]
        try:
            for register in TELEMETRY_REGISTERS + FC_STATE_REGISTERS:
                cells = conn.read_register(register, indices=indices)
                for p in ports:
                    out[str(p)][register] = [cells.get(p * num_classes + c, 0)
                                             for c in range(num_classes)]
        except Exception as exc:  # noqa: BLE001 - the counters are still worth having
            for p in ports:
                out[str(p)]["registers_unread"] = f"{type(exc).__name__}: {exc}"
        return out

    return {name: ({"error": f"{type(r).__name__}: {r}"} if isinstance(r, Exception) else r)
            for name, r in on_every_switch(fabric, read).items()}


def read_all(sm, fabric: Fabric) -> Readout:
    """Drops and telemetry of every switch, laid out as the pushed program says."""
    drops, unreadable = read_drops(sm, fabric)
    p4info = next(c.p4info for c in sm.connections.values() if c.p4info is not None)
    num_classes = layout(p4info).num_classes
    return Readout(drops, unreadable, read_telemetry(sm.connections, fabric, num_classes))


def counters_json(drops: dict[str, Drops], run_id: str | None = None) -> dict:
    """counters.json: {"run_id"?, switch: {"portN/reason": {"packets", "bytes"}}}."""
    out: dict = {} if run_id is None else {"run_id": run_id}
    out.update({sw: {f"port{port}/{reason}": {"packets": p, "bytes": b}
                     for (port, reason), (p, b) in sorted(per.items())}
                for sw, per in drops.items()})
    return out
