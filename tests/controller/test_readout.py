"""Switch readout after a run: one switch that cannot answer loses its own figures only."""

from __future__ import annotations

import pytest

from controller.readout import (
    BLOCKED_QUANTUM_NS,
    counters_json,
    read_drops,
    read_telemetry,
    registers_from_counters,
)
from topologies.generators import build


class _Conn:
    def __init__(self, registers_ok: bool = True, step_counters: bool = True) -> None:
        self.registers_ok = registers_ok
        self.step_counters = step_counters

    def read_counters(self, name, indices):
        steps = {"buffer_in": 9, "buffer_out": 6, "tickets_issued": 5, "tickets_served": 4,
                 "peak_rises": 3, "blocked_quanta": 2}
        if name in steps:
            if not self.step_counters:
                raise KeyError(f"no counter {name}")
            return {i: (steps[name], 0) for i in indices}
        return {i: (i % 7, 0) for i in indices}

    def read_register(self, name, indices):
        if not self.registers_ok:
            raise RuntimeError("UNIMPLEMENTED")
        return {i: 1 for i in indices}


class _SM:
    def read_drop_counters(self, switch):
        if switch == "s2":
            raise ConnectionError("s2 is gone")
        return {(1, "tail"): (2, 128)}


def test_a_dead_switch_is_listed_and_the_others_are_read():
    drops, unreadable = read_drops(_SM(), build("line:3"))
    assert drops == {"s1": {(1, "tail"): (2, 128)}, "s3": {(1, "tail"): (2, 128)}}
    assert unreadable == {"s2": "s2 is gone"}
    assert counters_json(drops, "run-1")["s1"] == {"port1/tail": {"packets": 2, "bytes": 128}}


def test_telemetry_per_port_and_class_and_registers_a_switch_cannot_read():
    fabric = build("line:2")
    telemetry = read_telemetry({"s1": _Conn(), "s2": _Conn(registers_ok=False)}, fabric, 4)
    assert telemetry["s1"]["2"]["class_tx"] == [(2 * 4 + c) % 7 for c in range(4)]
    assert telemetry["s1"]["2"]["fc_buffer"] == [1, 1, 1, 1]
    assert telemetry["s2"]["1"]["fc_buffer"] == [3, 3, 3, 3]  # from the step counters
    assert telemetry["s2"]["1"]["buffer_peak"] == [3, 3, 3, 3]
    assert telemetry["s2"]["1"]["blocked_ns"] == [2 * BLOCKED_QUANTUM_NS] * 4  # in quanta
    assert telemetry["s2"]["1"]["registers_unread"].startswith("derived from counters")
    assert "RuntimeError: UNIMPLEMENTED" in telemetry["s2"]["1"]["registers_unread"]


def test_a_program_without_step_counters_leaves_the_registers_unread():
    fabric = build("line:2")
    conns = {"s1": _Conn(), "s2": _Conn(registers_ok=False, step_counters=False)}
    telemetry = read_telemetry(conns, fabric, 4)
    assert "fc_buffer" not in telemetry["s2"]["1"]
    assert telemetry["s2"]["1"]["registers_unread"] == "RuntimeError: UNIMPLEMENTED"


def test_registers_from_counters_derives_each_register_and_wraps_at_32_bits():
    derived = registers_from_counters({"buffer_in": 10, "buffer_out": 7,
                                       "tickets_issued": (1 << 32) + 2, "tickets_served": 1,
                                       "peak_rises": 4, "blocked_quanta": 5})
    assert derived == {"fc_buffer": 3, "fc_queue_head": 1, "fc_queue_tail": 2,
                       "buffer_peak": 4, "blocked_ns": 5 * BLOCKED_QUANTUM_NS}


def test_registers_from_counters_names_the_missing_counters():
    with pytest.raises(ValueError, match="missing.*peak_rises"):
        registers_from_counters({"buffer_in": 1, "buffer_out": 0, "tickets_issued": 0,
                                 "tickets_served": 0})
