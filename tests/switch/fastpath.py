"""Run packets through the data-plane thread's per-packet function (the fused
fast path of p4switch.program when the program has one) instead of
Switch.process(), so that the unit tests cover both paths."""

from __future__ import annotations

import random

import pytest

from p4switch.switch import Switch

CPU_PORT = 510


def process_fast(sw: Switch, port: int, frame: bytes) -> list[tuple[int, bytes]]:
    """`frame` through the switch's data-plane per-packet function (Switch.process(fast=True))."""
    for p in range(16):
        sw.tm.port(p)  # ports the programs send to exist, idle, up and unlimited
    return sw.process(port, frame, fast=True)


@pytest.fixture(params=["process", "fast", "specialised"])
def both_paths(request, monkeypatch):
    """Parametrize a module's tests over Switch.process, the fast path, and the fast
    path with every configuration table baked in as it stands (Switch.specialise_now
    before each frame where a write left the generic function) (the fast paths are
    used when the switch has no program, rate, delay, trace or priority queues that
    only process() models)."""
    if request.param != "process":
        orig = Switch.process
        specialised = request.param == "specialised"

        def proc(self, port, frame, fast=False):
            if self.program is None or self._trace or self.tm.nprio != 1 or any(
                    not pq.unlimited or pq.delay_s for pq in self.tm.ports.values()):
                return orig(self, port, frame, fast)
            for p in range(16):
                self.tm.port(p)
            if specialised and self.program.fused is self.program.fused_generic:
                self.specialise_now()
            return orig(self, port, frame, True)
        monkeypatch.setattr(Switch, "process", proc)
    return request.param


def fabric_frames(rng: random.Random, n: int) -> list[tuple[int, bytes]]:
    """Pseudo-random mixes of fabric.p4's formats (and garbage), with their ports."""
    eth = bytes.fromhex("0000000000b2" "0000000000a1")
    out = []
    for _ in range(n):
        kind = rng.randrange(6)
        port = rng.choice([1, 2, 3])
        if kind == 0:  # fabric frame, random LRH/BTH/payload
            body = bytes([rng.randrange(256), rng.choice([1, 2, 3, 4, 9])]) + \
                rng.randrange(1, 12).to_bytes(2, "big") + rng.randbytes(4 + rng.randrange(40))
            out.append((port, eth + b"\x88\xb5" + body))
        elif kind == 1:  # PFC-like pause frame
            out.append((port, eth + b"\x88\x08" + b"\x01\x01" + rng.randbytes(18)))
        elif kind == 2:  # truncated fabric frame
            out.append((port, eth + b"\x88\xb5" + rng.randbytes(rng.randrange(8))))
        elif kind == 3:  # something else
            out.append((port, rng.randbytes(14 + rng.randrange(50))))
        elif kind == 4:  # packet-out from the CPU port
            out.append((CPU_PORT, rng.randrange(1, 4).to_bytes(2, "big") + b"\x00\x00" + eth +
                        b"\x88\xb5" + bytes([0, 1]) + rng.randrange(1, 12).to_bytes(2, "big") +
                        rng.randbytes(40)))
        else:  # a DATA frame to a routed DLID
            lrh = bytes([rng.randrange(16), 1]) + rng.randrange(1, 9).to_bytes(2, "big") + \
                (7).to_bytes(2, "big") + (32).to_bytes(2, "big")
            out.append((port, eth + b"\x88\xb5" + lrh + rng.randbytes(32)))
    return out
