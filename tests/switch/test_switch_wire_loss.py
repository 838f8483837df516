"""A port's `loss` parameter: an emulated lossy cable after egress and its counters."""

from __future__ import annotations

import pytest

from p4switch.runtime_api import DataplaneError
from p4switch.switch import Switch


class Wire:
    def __init__(self) -> None:
        self.frames: list[bytes] = []

    def send(self, frame: bytes) -> int:
        self.frames.append(frame)
        return len(frame)


def test_a_lossy_port_loses_exactly_its_fraction_of_frames_and_counts_them():
    sw = Switch({1: "p1", 2: "p2"})
    sw.port_set_params(1, loss=0.25)
    wires = {1: Wire(), 2: Wire()}
    sw._socks, sw._port_up = wires, {1: True, 2: True}
    for i in range(100):
        assert sw._send(1, bytes([i]))  # the port transmitted it: the cable lost it
        assert sw._send(2, bytes([i]))
    assert len(wires[1].frames) == 75 and sw.wire_lost == {1: 25}
    assert len(wires[2].frames) == 100


@pytest.mark.parametrize("loss", [-0.1, 1.0, 2.0])
def test_a_loss_outside_0_to_1_is_refused(loss):
    with pytest.raises(DataplaneError, match="loss must be a fraction"):
        Switch({1: "p1"}).port_set_params(1, loss=loss)
