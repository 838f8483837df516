"""VL arbitration as InfiniBand defines it: the transmit scheduler of one port.

Shared by the NIC emulator (traffic/nic.py) and the embedded switch's traffic
manager (p4switch/traffic_manager.py); pure, no I/O, no clock.

A port has two tables of (VL, weight) entries, high and low priority, and a
limit of high priority:

* weight: 64-byte units a VL may send when its entry's turn comes (0-255);
  an entry of weight 0 is skipped. A packet may start while its entry has
  weight left, and is charged in full (ceil(bytes / 64) units) even if that
  overdraws the entry; the next packet then comes from the next entry. An
  entry whose VL has nothing to send gives up its turn. The same VL may appear
  in several entries and in both tables.
* high_limit: how many bytes, in 4096-byte units, the high-priority table may
  send while a low-priority packet waits; 255 = unbounded (low may starve),
  0 = one high-priority packet at a time. A low-priority packet sent, or a
  moment with no low-priority packet waiting, restarts the count.

`VlArbiter.pick(ready)` names the VL of the next packet, given the set of
VLs that have one that may leave now (flow control is the caller's business);
`VlArbiter.charge(vl, nbytes)` accounts for it once it is sent.
"""

from __future__ import annotations

from dataclasses import dataclass

# How the SM writes a port's table to the embedded switch: a P4Runtime ExternEntry
# (extern_id = port, entry = google.protobuf.Struct of `as_dict()`; DELETE = strict
# priority again). 0x81 is the first architecture-specific extern type id;
# simple_switch_grpc has no such extern and answers UNIMPLEMENTED.
P4RUNTIME_EXTERN_TYPE_ID = 0x81

WEIGHT_UNIT = 64  # bytes per unit of an entry's weight
LIMIT_UNIT = 4096  # bytes per unit of the limit of high priority
UNBOUNDED_LIMIT = 255
MAX_WEIGHT = 255
MAX_DATA_VL = 14  # VL15 is management: never in an arbitration table
MAX_ENTRIES = 64  # IB: up to 64 entries per table


class VlArbitrationError(ValueError):
    """An arbitration table that InfiniBand would not accept; says which entry and why."""


@dataclass(frozen=True)
class VlArbitration:
    """One port's VLArbitrationTable: high and low (VL, weight) lists and the limit."""

    high: tuple[tuple[int, int], ...] = ()
    low: tuple[tuple[int, int], ...] = ()
    high_limit: int = 0

    def __post_init__(self) -> None:
        for name, table in (("high", self.high), ("low", self.low)):
            if len(table) > MAX_ENTRIES:
                raise VlArbitrationError(f"vlarb_{name}: {len(table)} entries, at most "
                                         f"{MAX_ENTRIES}")
            for vl, weight in table:
                if not 0 <= vl <= MAX_DATA_VL:
                    raise VlArbitrationError(f"vlarb_{name}: VL {vl} is not a data VL (0-14)")
                if not 0 <= weight <= MAX_WEIGHT:
                    raise VlArbitrationError(f"vlarb_{name}: weight {weight} of VL {vl} is not "
                                             f"0-{MAX_WEIGHT}")
        if not 0 <= self.high_limit <= UNBOUNDED_LIMIT:
            raise VlArbitrationError(f"high_limit {self.high_limit} is not 0-255")
        if not any(w for _, w in self.high + self.low):
            raise VlArbitrationError("every entry has weight 0: no VL could ever send")

    @classmethod
    def equal(cls, vls: tuple[int, ...] | range = range(8), weight: int = 1) -> VlArbitration:
        """Every VL in the low table with the same weight: byte-fair round robin."""
        return cls(low=tuple((vl, weight) for vl in vls))

    def vls(self) -> set[int]:
        """VLs that can ever send (in an entry of non-zero weight)."""
        return {vl for vl, w in self.high + self.low if w}

    def as_dict(self) -> dict:
        return {"high": [list(e) for e in self.high], "low": [list(e) for e in self.low],
                "high_limit": self.high_limit}

    @classmethod
    def from_dict(cls, d: dict) -> VlArbitration:
        try:
            return cls(high=tuple((int(v), int(w)) for v, w in d.get("high", ())),
                       low=tuple((int(v), int(w)) for v, w in d.get("low", ())),
                       high_limit=int(d.get("high_limit", 0)))
        except (TypeError, ValueError, AttributeError) as exc:
            raise VlArbitrationError(f"bad arbitration table {d!r}: {exc}") from None


class _Table:
    """Weighted round robin over one table's entries."""

    __slots__ = ("entries", "index", "left", "mask")

    def __init__(self, entries: tuple[tuple[int, int], ...]) -> None:
        self.entries = entries
        self.index = 0
        self.left = entries[0][1] if entries else 0
        self.mask = 0  # VLs with an entry of non-zero weight
        for vl, weight in entries:
            if weight:
                self.mask |= 1 << vl

    def pick(self, ready: int) -> int:
        entries = self.entries
        vl, _weight = entries[self.index]
        if self.left > 0 and ready >> vl & 1:
            return vl
        n = len(entries)
        for step in range(1, n + 1):
            i = (self.index + step) % n
            vl, weight = entries[i]
            if weight and ready >> vl & 1:
                self.index, self.left = i, weight
                return vl
        return -1


class VlArbiter:
    """The arbitration state of one transmitting port (see the module doc)."""

    __slots__ = ("config", "_high", "_low", "_limit_bytes", "_high_sent", "_last_high",
                 "_low_waits")

    def __init__(self, config: VlArbitration) -> None:
        self.config = config
        self._high = _Table(config.high)
        self._low = _Table(config.low)
        limit = config.high_limit
        self._limit_bytes = None if limit == UNBOUNDED_LIMIT else limit * LIMIT_UNIT
        self._high_sent = 0  # high-priority bytes since the last low-priority opportunity
        self._last_high = False
        self._low_waits = False

    def pick(self, ready: int) -> int:
        """The VL to send from next (bit v of `ready`: VL v has a packet that may leave);
        -1 when no VL of either table is ready."""
        high_ready = ready & self._high.mask
        low_ready = ready & self._low.mask
        self._low_waits = bool(low_ready)
        if high_ready:
            if not low_ready:
                self._high_sent = 0  # nobody low waits: that was its opportunity
            if not low_ready or not self._high_exhausted():
                self._last_high = True
                return self._high.pick(high_ready)
        if low_ready:
            self._last_high = False
            return self._low.pick(low_ready)
        return -1

    def _high_exhausted(self) -> bool:
        limit = self._limit_bytes
        if limit is None:
            return False
        return self._high_sent > 0 and self._high_sent >= limit

    def serves(self, vl: int) -> bool:
        """Whether an entry of non-zero weight names the VL (else pick never chooses it)."""
        return bool((self._high.mask | self._low.mask) >> vl & 1)

    def charge(self, vl: int, nbytes: int) -> None:
        """The packet `pick` chose (of VL `vl`, `nbytes` long) was sent. A VL no entry
        serves (sent by a caller's fallback) is not charged."""
        if not self.serves(vl):
            return
        units = -(-nbytes // WEIGHT_UNIT)
        if self._last_high:
            self._high.left -= units
            if self._low_waits:
                self._high_sent += nbytes
        else:
            self._low.left -= units
            self._high_sent = 0
