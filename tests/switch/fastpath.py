"""Run packets through the data-plane thread's per-packet function (the fused
fast path of p4switch.program when the program has one) instead of
Switch.process(), so that the unit tests cover both paths."""

from __future__ import annotations

import pytest

from p4switch.switch import Switch

CPU_PORT = 510


def process_fast(sw: Switch, port: int, frame: bytes) -> list[tuple[int, bytes]]:
    """`frame` through the switch's data-plane per-packet function (Switch.process(fast=True))."""
    for p in range(16):
        sw.tm.port(p)  # ports the programs send to exist, idle, up and unlimited
    return sw.process(port, frame, fast=True)


@pytest.fixture(params=["process", "fast"])
def both_paths(request, monkeypatch):
    """Parametrize a module's tests over Switch.process and the fast path (used
    when the switch has no program, rate, delay, trace or priority queues that
    only process() models)."""
    if request.param == "fast":
        orig = Switch.process

        def proc(self, port, frame, fast=False):
            if self.program is None or self._trace or self.tm.nprio != 1 or any(
                    not pq.unlimited or pq.delay_s for pq in self.tm.ports.values()):
                return orig(self, port, frame, fast)
            for p in range(16):
                self.tm.port(p)
            return orig(self, port, frame, True)
        monkeypatch.setattr(Switch, "process", proc)
    return request.param
