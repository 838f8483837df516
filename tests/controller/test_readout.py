"""Switch readout after a run: one switch that cannot answer loses its own figures only."""

from __future__ import annotations

from controller.readout import (
    FC_STATE_COUNTERS,
    counters_json,
    fc_state_from_counters,
    read_drops,
    read_telemetry,
)
from topologies.generators import build
from traffic.stall import held_at_end

# what a bmv2 switch's counters say at the end of a run, by counter: index -> packets
_FC_COUNTS = {"fc_admitted": 10, "fc_released": 7, "fc_ticket_issued": 5, "fc_ticket_passed": 3}


class _Conn:
    def __init__(self, registers_ok: bool = True, fc_counters: bool = True) -> None:
        self.registers_ok = registers_ok
        self.fc_counters = fc_counters

    def read_counters(self, name, indices):
        if name in FC_STATE_COUNTERS:
            if not self.fc_counters:
                raise KeyError(f"no counter {name}")
            return {i: (_FC_COUNTS[name] if i == 1 * 4 + 2 else 0, 0) for i in indices}
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
    unread = telemetry["s2"]["1"]["registers_unread"]
    assert unread.startswith("RuntimeError: UNIMPLEMENTED")
    assert "blocked_ns" not in telemetry["s2"]["1"]


def test_without_register_reads_the_flow_control_state_comes_from_counters():
    """bmv2: frames held = admitted - released; waiting = tickets issued - passed."""
    fabric = build("line:2")
    telemetry = read_telemetry({"s1": _Conn(), "s2": _Conn(registers_ok=False)}, fabric, 4)
    port = telemetry["s2"]["1"]
    assert port["fc_buffer"] == [0, 0, 3, 0]
    assert port["fc_queue_tail"] == [0, 0, 5, 0] and port["fc_queue_head"] == [0, 0, 3, 0]
    assert "blocked_ns" not in port and "buffer_peak" not in port
    assert "flow-control state from counters" in port["registers_unread"]
    held = [h for h in held_at_end(telemetry) if h.switch == "s2"]
    assert [(h.port, h.klass, h.buffered, h.waiting) for h in held] == [(1, 2, 3, 2)]


def test_a_program_without_those_counters_leaves_the_state_unread():
    fabric = build("line:2")
    telemetry = read_telemetry({"s1": _Conn(), "s2": _Conn(registers_ok=False,
                                                          fc_counters=False)}, fabric, 4)
    assert "fc_buffer" not in telemetry["s2"]["1"]
    assert telemetry["s2"]["1"]["registers_unread"] == "RuntimeError: UNIMPLEMENTED"


def test_ticket_counters_wrap_as_the_registers_do():
    state = fc_state_from_counters([5], [5], [(1 << 32) + 2], [(1 << 32) - 1])
    assert state == {"fc_buffer": [0], "fc_queue_tail": [2], "fc_queue_head": [(1 << 32) - 1]}
