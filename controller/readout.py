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
# the counters fabric.p4 steps beside those registers (telemetry.p4), for a target
# whose P4Runtime server reads counters only (bmv2)
REGISTER_COUNTERS = ("buffer_in", "buffer_out", "tickets_issued", "tickets_served",
                     "peak_rises", "blocked_quanta")
# blocked_ns (a sum of durations) in counter form: one blocked_quanta step per quantum
# (telemetry.p4's BLOCKED_QUANTUM_SHIFT), two at most per frame through the gate, so
# derived it is low by less than two quanta once a frame has passed the port since
BLOCKED_QUANTUM_NS = 1 << 22

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


def registers_from_counters(counts: dict[str, int]) -> dict[str, int]:
    """The register values fabric.p4 keeps, derived from its step counters (packets).

    `counts` maps each of REGISTER_COUNTERS to its packet count for one (port, class);
    the 32-bit registers wrap as theirs do. blocked_ns comes in whole quanta
    (BLOCKED_QUANTUM_NS): the register's value less up to two quanta."""
    missing = [name for name in REGISTER_COUNTERS if name not in counts]
    if missing:
        raise ValueError(f"registers_from_counters: expected counters {REGISTER_COUNTERS}, "
                         f"missing {missing}")
    wrap = (1 << 32) - 1
    return {"fc_buffer": (counts["buffer_in"] - counts["buffer_out"]) & wrap,
            "fc_queue_head": counts["tickets_served"] & wrap,
            "fc_queue_tail": counts["tickets_issued"] & wrap,
            "buffer_peak": counts["peak_rises"] & wrap,
            "blocked_ns": counts["blocked_quanta"] * BLOCKED_QUANTUM_NS}


def _derive_registers(conn, ports: list[int], num_classes: int, indices: list[int],
                      out: dict) -> None:
    """Fill `out` with the registers derivable from the step counters."""
    cells = {name: conn.read_counters(name, indices=indices) for name in REGISTER_COUNTERS}
    for p in ports:
        per_class = [registers_from_counters(
            {name: cells[name].get(p * num_classes + c, (0, 0))[0] for name in cells})
            for c in range(num_classes)]
        for register in per_class[0]:
            out[str(p)][register] = [values[register] for values in per_class]


def read_telemetry(connections: dict, fabric: Fabric, num_classes: int) -> dict[str, dict]:
    """Per switch, per wired port, per class: the telemetry and flow-control state.

    {switch: {port: {name: [num_classes values]}}}; a switch that cannot answer, or a
    program without these counters, gives {"error": why}. Registers a switch cannot
    read (bmv2's P4Runtime server: UNIMPLEMENTED) are derived from the counters fabric.p4
    steps beside them (`registers_from_counters`), and each port's "registers_unread"
    says so and why (or, for a program without those counters, why they are missing)."""
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
            why = f"{type(exc).__name__}: {exc}"
            try:
                _derive_registers(conn, ports, num_classes, indices, out)
                why = (f"derived from counters (blocked_ns in {BLOCKED_QUANTUM_NS / 1e6:.3f} "
                       f"ms quanta): {why}")
            except Exception:  # noqa: BLE001 - a program without the step counters
                pass
            for p in ports:
                out[str(p)]["registers_unread"] = why
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
