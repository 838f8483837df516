"""What an STF run produced, and p4c's rules for checking it (bmv2stf.py's
checkOutputs): shared by the embedded and the bmv2 runners."""

from __future__ import annotations

import operator
from collections import defaultdict
from dataclasses import dataclass, field

from p4compiler import stf

_OPS = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
        ">": operator.gt, ">=": operator.ge}


class StfRunError(Exception):
    """The script cannot be run against this program (exit code 2)."""


@dataclass
class Outcome:
    """What a run produced: packets out per port and the mismatches found."""

    outputs: dict[int, list[bytes]] = field(default_factory=lambda: defaultdict(list))
    mismatches: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)   # ordering_notes(): not failures

    @property
    def passed(self) -> bool:
        return not self.mismatches


# ----------------------------------------------------------------- comparing
def _first_diff(pattern: str, got: str) -> int:
    for i, (p, g) in enumerate(zip(pattern, got)):
        if p != "*" and p != g:
            return i // 2
    return min(len(pattern), len(got)) // 2


def _describe(e: stf.Expect, data: bytes) -> str:
    got = data.hex()
    if len(got) < len(e.pattern):
        why = f"{len(data)} bytes, expected at least {len(e.pattern) // 2}"
    elif e.exact and len(got) != len(e.pattern):
        why = f"{len(data)} bytes, expected exactly {len(e.pattern) // 2} ($)"
    else:
        why = f"first difference at byte {_first_diff(e.pattern, got)}"
    return (f"    expected {e.pattern}{' $' if e.exact else ''}\n"
            f"    got      {got}  ({why})")


def compare(script: stf.StfScript, outputs: dict[int, list[bytes]], filename: str) -> list[str]:
    """bmv2stf's checkOutputs: per port of the script, the expected packets in order."""
    expects: dict[int, list[stf.Expect]] = defaultdict(list)
    anyp: set[int] = set()
    for c in script.commands:
        if isinstance(c, stf.Expect):
            if c.any:
                anyp.add(c.port)
            elif c.pattern is not None:
                expects[c.port].append(c)
    out: list[str] = []
    for port in sorted(script.ports()):
        if port in anyp:
            continue
        exp, got = expects.get(port, []), outputs.get(port, [])
        lines = []
        for i in range(max(len(exp), len(got))):
            if i < len(exp) and i < len(got):
                if not exp[i].matches(got[i]):
                    lines.append(f"  packet {i + 1} ({filename}:{exp[i].line}) differs:\n"
                                 + _describe(exp[i], got[i]))
            elif i < len(exp):
                lines.append(f"  packet {i + 1} ({filename}:{exp[i].line}) missing: expected "
                             f"{exp[i].pattern}{' $' if exp[i].exact else ''}")
            else:
                lines.append(f"  packet {i + 1} unexpected: {got[i].hex()}")
        if lines:
            out.append(f"port {port}: expected {len(exp)} packet(s), got {len(got)}\n"
                       + "\n".join(lines))
    return out


def check_counter(c: stf.CounterCheck, nbytes: int, npkts: int, filename: str,
                  name: str | None = None) -> str | None:
    have = npkts if c.what == "packets" else nbytes
    if _OPS[c.op](have, c.value):
        return None
    cell = c.entry if c.entry is not None else c.index
    return (f"counter {name or c.counter}[{cell}] ({filename}:{c.line}): {c.what} {have}, "
            f"expected {c.op} {c.value}")


# ----------------------------------------------------------------- named entries
class NamedEntries:
    """Entries the script named (`add ... = NAME`): NAME -> (table, entry handle).
    p4c's STF writes `check_counter C($NAME)` for the entry `= NAME` made; a leading
    `$` is not part of the name."""

    def __init__(self):
        self.entries: dict[str, tuple[str, int]] = {}

    def name(self, name: str | None, table: str, handle: int) -> None:
        if name:
            self.entries[name.lstrip("$")] = (table, handle)

    def get(self, name: str, where: str) -> tuple[str, int]:
        if name.lstrip("$") in self.entries:   # `$A` and `A` name the same entry
            return self.entries[name.lstrip("$")]
        known = ", ".join(sorted(self.entries)) or "none"
        raise StfRunError(f"{where}: no entry named {name!r} (add ... = NAME; named: {known})")

    def pop(self, name: str, where: str) -> tuple[str, int]:
        found = self.get(name, where)
        self.entries = {k: v for k, v in self.entries.items() if v != found}
        return found

    def counter_cell(self, c: stf.CounterCheck, names, where: str
                     ) -> tuple[str, str | None, int]:
        """(counter, table if direct, index or entry handle) that check_counter reads."""
        name = names.counter(c.counter, where)
        table = names.direct_counters.get(name)
        if c.entry is None:
            return name, table, c.index
        etable, handle = self.get(c.entry, where)
        if table != etable:
            raise StfRunError(f"{where}: {c.entry} is an entry of {etable}; counter {name} "
                              + (f"counts {table}'s entries" if table else
                                 "is not a direct counter"))
        return name, table, handle


# ----------------------------------------------------------------- ordering
def ordering_notes(script: stf.StfScript, filename: str) -> list[str]:
    """Control commands that real bmv2 applies before a packet the script sends
    earlier. simple_switch in pcap-file mode (as p4c's bmv2stf.py runs it, and
    p4switch/stf_bmv2.py) merges its port files by timestamp: it takes a packet
    only once every other port's file holds a later packet or has ended. A packet
    is therefore processed only after the script has gone on to write a packet on
    every other port (or has ended), and the control commands written meanwhile
    are already in force for it. The embedded run applies commands in script
    order, so for these commands the two runners can differ."""
    ports = script.ports()
    if len(ports) < 2:
        return []
    cmds = script.commands
    end = len(cmds)
    later: dict[int, list[int]] = {p: [] for p in ports}   # packet indices per port
    for i, c in enumerate(cmds):
        if isinstance(c, stf.Packet):
            later[c.port].append(i)
    released_at: list[tuple[int, int]] = []   # (packet index, index it is taken at)
    floor = 0
    for i, c in enumerate(cmds):
        if not isinstance(c, stf.Packet):
            continue
        at = max((next((j for j in later[q] if j > i), end) for q in ports if q != c.port),
                 default=end)
        floor = max(floor, at)   # taken in timestamp order: never before an earlier one
        released_at.append((i, floor))
    notes = []
    for i, c in enumerate(cmds):
        if isinstance(c, (stf.Packet, stf.Expect, stf.CounterCheck)):
            continue
        if isinstance(c, stf.Control) and c.op in ("wait", "no_packet"):
            continue
        held = next((k for k, at in released_at if k < i < at), None)
        if held is not None:
            notes.append(f"{filename}:{c.line}: on real bmv2 this command is already in force "
                         f"for the packet of line {cmds[held].line} (port {cmds[held].port}): "
                         "simple_switch takes a packet only once every other port has a "
                         "later one or has ended; the embedded run applies it in script "
                         "order")
    return notes
