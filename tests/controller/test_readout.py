"""Switch readout after a run: one switch that cannot answer loses its own figures only."""

from __future__ import annotations

from controller.readout import counters_json, read_drops, read_telemetry
from topologies.generators import build


class _Conn:
    def __init__(self, registers_ok: bool = True) -> None:
        self.registers_ok = registers_ok

    def read_counters(self, name, indices):
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
    assert "fc_buffer" not in telemetry["s2"]["1"]
    assert telemetry["s2"]["1"]["registers_unread"] == "RuntimeError: UNIMPLEMENTED"
