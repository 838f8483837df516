"""Stateful externs (counters, registers, meters) and v1model hash algorithms."""

from __future__ import annotations

import random
import zlib

from p4switch.runtime_api import DataplaneError


class CounterArray:
    """bmv2 counters always count both bytes and packets."""

    __slots__ = ("name", "size", "nbytes", "npkts")

    def __init__(self, name: str, size: int):
        self.name = name
        self.size = size
        self.nbytes = [0] * size
        self.npkts = [0] * size

    def check(self, index: int) -> None:
        if not 0 <= index < self.size:
            raise DataplaneError(f"counter {self.name}: index {index} out of range [0, {self.size})")


class RegisterArray:
    __slots__ = ("name", "size", "width", "cells")

    def __init__(self, name: str, size: int, width: int):
        self.name = name
        self.size = size
        self.width = width
        self.cells = [0] * size

    def check(self, index: int) -> None:
        if not 0 <= index < self.size:
            raise DataplaneError(
                f"register {self.name}: index {index} out of range [0, {self.size})")


GREEN, YELLOW, RED = 0, 1, 2


class Meter:
    """One two-rate three-colour meter (RFC 2698, colour-blind) as bmv2 runs it.

    Rates are per microsecond (P4Runtime's per-second rates / 1e6) and bursts in
    packets or bytes. An unconfigured meter marks everything GREEN.
    """

    __slots__ = ("rates", "tokens", "last_us")

    def __init__(self):
        self.rates: list[tuple[float, int]] = []
        self.tokens: list[float] = []
        self.last_us = 0.0

    def configure(self, rates: list[tuple[float, int]]) -> None:
        """(rate per us, burst) per bucket, committed then peak; none: every packet
        GREEN. bmv2 refuses rates that decrease (a committed rate above the peak rate:
        INVALID_INFO_RATE_VALUE), and so do we."""
        if any(a[0] > b[0] for a, b in zip(rates, rates[1:])):
            raise DataplaneError(f"meter rates {list(rates)}: the committed rate is above "
                                 "the peak rate (bmv2: INVALID_INFO_RATE_VALUE)")
        self.rates = list(rates)
        self.tokens = [float(burst) for _rate, burst in self.rates]
        self.last_us = 0.0

    def execute(self, amount: int, now_us: float) -> int:
        if not self.rates:
            return GREEN
        if self.last_us:
            dt = now_us - self.last_us
            for i, (rate, burst) in enumerate(self.rates):
                self.tokens[i] = min(float(burst), self.tokens[i] + rate * dt)
        self.last_us = now_us
        # rates[0] = committed, rates[1] = peak: check the peak bucket first.
        if len(self.tokens) > 1 and self.tokens[1] < amount:
            return RED
        if self.tokens[0] < amount:
            if len(self.tokens) > 1:
                self.tokens[1] -= amount
                return YELLOW
            return RED
        for i in range(len(self.tokens)):
            self.tokens[i] -= amount
        return GREEN


class MeterArray:
    __slots__ = ("name", "size", "count_bytes", "meters")

    def __init__(self, name: str, size: int, count_bytes: bool):
        self.name = name
        self.size = size
        self.count_bytes = count_bytes
        self.meters = [Meter() for _ in range(size)]

    def check(self, index: int) -> None:
        if not 0 <= index < self.size:
            raise DataplaneError(f"meter {self.name}: index {index} out of range [0, {self.size})")


# -- hash algorithms (input: the concatenated field bits, left-aligned in bytes) --

def _crc16_table() -> list[int]:
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0xA001 if c & 1 else c >> 1
        table.append(c)
    return table


_CRC16 = _crc16_table()


def crc16(data: bytes) -> int:
    """CRC-16/ARC (polynomial 0x8005, reflected), bmv2's `crc16`."""
    c = 0
    for b in data:
        c = (c >> 8) ^ _CRC16[(c ^ b) & 0xFF]
    return c


def crc32(data: bytes) -> int:
    return zlib.crc32(data) & 0xFFFFFFFF


def csum16(data: bytes) -> int:
    """Internet checksum (ones' complement of the ones' complement sum)."""
    if len(data) % 2:
        data += b"\0"
    s = sum(int.from_bytes(data[i:i + 2], "big") for i in range(0, len(data), 2))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def identity(data: bytes) -> int:
    """bmv2's `identity`: the first 8 bytes of the input (its uint64 result), big-endian."""
    return int.from_bytes(data[:8], "big")


def xor16(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    r = 0
    for i in range(0, len(data), 2):
        r ^= int.from_bytes(data[i:i + 2], "big")
    return r


def rand(_data: bytes) -> int:
    return random.getrandbits(32)


HASH_ALGORITHMS = {
    "crc16": crc16,
    "crc32": crc32,
    # v1model's crc16_custom/crc32_custom: bmv2 starts them with the standard
    # parameters, which only its runtime CLI (set_crc16_parameters) changes
    "crc16_custom": crc16,
    "crc32_custom": crc32,
    "csum16": csum16,
    "identity": identity,
    "random": rand,
    "xor16": xor16,
}


def pack_bits(values_widths: list[tuple[int, int]]) -> bytes:
    """Concatenate (value, width) bit strings, left-aligned, zero-padded to whole bytes."""
    acc = 0
    nbits = 0
    for v, w in values_widths:
        acc = (acc << w) | (v & ((1 << w) - 1))
        nbits += w
    pad = -nbits % 8
    return (acc << pad).to_bytes((nbits + pad) // 8, "big")
