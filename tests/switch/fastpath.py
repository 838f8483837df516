"""Run packets through the data-plane thread's per-packet function (the fused
fast path of p4switch.program when the program has one) instead of
Switch.process(), so that the unit tests cover both paths."""

from __future__ import annotations

import time

import pytest

from p4switch.switch import Switch

CPU_PORT = 510


def process_fast(sw: Switch, port: int, frame: bytes) -> list[tuple[int, bytes]]:
    """`frame` through Switch._fast_path(); outputs captured as process() does."""
    prog = sw.program
    for p in (*range(16), *sw.ports, CPU_PORT):
        sw.tm.port(p)  # ports exist and are idle, up and unlimited: the fast path
    out: list[tuple[int, bytes]] = []
    sw._sync_out = out
    try:
        rx = sw._fast_path(prog)
        now = time.monotonic()
        rx(frame, port, now, int((now - sw.t0) * 1e6))
        sw._run_resubmits(prog, now, 16)
        sw._resubmits.clear()
    finally:
        sw._sync_out = None
    return out


@pytest.fixture(params=["process", "fast"])
def both_paths(request, monkeypatch):
    """Parametrize a module's tests over Switch.process and the fast path (used
    when the switch has no program, rate, delay, trace or priority queues that
    only process() models)."""
    if request.param == "fast":
        orig = Switch.process

        def proc(self, port, frame):
            if self.program is None or self._trace or self.tm.nprio != 1 or any(
                    not pq.unlimited or pq.delay_s for pq in self.tm.ports.values()):
                return orig(self, port, frame)
            return process_fast(self, port, frame)
        monkeypatch.setattr(Switch, "process", proc)
    return request.param
