"""Partitions: OpenSM's partitions.conf (a documented subset) and what follows from it.

A partition is a P_Key (15-bit base, 0x0001-0x7FFF) and its members, host ports
that are full or limited members. Two ports may talk iff they share a
partition and at least one of them is a full member of it (InfiniBand's rule:
two limited members cannot). The P_Key a frame carries is the base with bit 15
set when its sender is a full member.

The file, one partition per statement, a statement ends with `;` and may span
lines, `#` starts a comment:

    Default=0x7fff : ALL=full ;
    jobA=0x0001 : h1=full, h2=full, h3 ;              # h3 limited (OpenSM's default)
    jobB=0x0002, defmember=full : h4, h5, storage1=limited ;

Members are host names of the fabric (or `ALL`, every host); a member without
`=full|limited` takes the statement's `defmember` (default limited, as in OpenSM).
Flags: `defmember=full|limited`; `ipoib` is accepted and has no effect. Anything
else (a P_Key out of range, a name given twice, an unknown host or flag, a
missing `:` or `;`) is refused with its line number.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

FULL_BIT = 0x8000
MAX_PKEY = 0x7FFF
DEFAULT_PKEY = 0xFFFF  # the default partition, full member: what frames carry without partitions
_NAME = re.compile(r"^[A-Za-z_][\w.-]*$")


class PartitionsError(ValueError):
    """A partitions file that cannot be used; the message names the line."""


@dataclass(frozen=True)
class Partition:
    name: str
    pkey: int  # base, 15 bits
    members: tuple[tuple[str, bool], ...]  # (host, full member)
    line: int = 0

    def membership(self, host: str) -> bool | None:
        """True full, False limited, None not a member."""
        for name, full in self.members:
            if name == host:
                return full
        return None


@dataclass(frozen=True)
class Partitions:
    partitions: tuple[Partition, ...]

    def shared(self, a: str, b: str) -> Partition | None:
        """The first partition in which a and b may talk (both members, one full)."""
        for p in self.partitions:
            fa, fb = p.membership(a), p.membership(b)
            if fa is not None and fb is not None and (fa or fb):
                return p
        return None

    def pkey_for(self, src: str, dst: str) -> int | None:
        """The P_Key src puts in frames to dst (membership bit = src's), None if they
        may not talk."""
        p = self.shared(src, dst)
        if p is None:
            return None
        return p.pkey | (FULL_BIT if p.membership(src) else 0)

    def port_table(self, host: str) -> dict[int, bool]:
        """P_Key base -> full membership: the host's port's P_Key table."""
        return {p.pkey: full for p in self.partitions
                if (full := p.membership(host)) is not None}

    def as_dict(self) -> list[dict]:
        return [{"name": p.name, "pkey": f"{p.pkey:#06x}",
                 "members": {h: "full" if f else "limited" for h, f in p.members}}
                for p in self.partitions]


def parse_partitions(text: str, hosts: list[str] | tuple[str, ...],
                     source: str = "partitions.conf") -> Partitions:
    """Parse the file's text for a fabric with these host names."""
    known = set(hosts)
    partitions: list[Partition] = []
    for line, statement in _statements(text, source):
        p = _partition(statement, line, known, list(hosts), source)
        for other in partitions:
            if other.name == p.name:
                raise PartitionsError(f"{source}:{line}: partition {p.name!r} given twice "
                                      f"(first on line {other.line})")
            if other.pkey == p.pkey:
                raise PartitionsError(f"{source}:{line}: P_Key {p.pkey:#06x} of {p.name!r} is "
                                      f"already used by {other.name!r} (line {other.line})")
        partitions.append(p)
    return Partitions(tuple(partitions))


def load_partitions(path: Path | str, hosts: list[str] | tuple[str, ...]) -> Partitions:
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise PartitionsError(f"{path}: {exc.strerror}") from None
    return parse_partitions(text, hosts, str(path))


def _statements(text: str, source: str):
    """(line where it starts, text) of each `;`-terminated statement."""
    buf, start = "", 0
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0]
        while line.strip():
            head, semi, line = line.partition(";")
            if head.strip() and not buf.strip():
                start = lineno
            buf += " " + head
            if not semi:
                break
            if not buf.strip():
                raise PartitionsError(f"{source}:{lineno}: empty statement (a stray ';')")
            yield start, buf.strip()
            buf = ""
    if buf.strip():
        raise PartitionsError(f"{source}:{start}: statement not ended with ';'")


def _partition(statement: str, line: int, known: set[str], hosts: list[str],
               source: str) -> Partition:
    where = f"{source}:{line}"
    head, colon, body = statement.partition(":")
    if not colon:
        raise PartitionsError(f"{where}: expected 'Name=PKey[, flags] : members ;'")
    name_pkey, *flags = (f.strip() for f in head.split(","))
    name, eq, pkey_text = (s.strip() for s in name_pkey.partition("="))
    if not eq or not _NAME.match(name):
        raise PartitionsError(f"{where}: expected 'Name=PKey', got {name_pkey!r}")
    try:
        pkey = int(pkey_text, 0)
    except ValueError:
        raise PartitionsError(f"{where}: P_Key {pkey_text!r} is not a number") from None
    if not 1 <= pkey & ~FULL_BIT <= MAX_PKEY or pkey > 0xFFFF:
        raise PartitionsError(f"{where}: P_Key {pkey_text} is not 0x0001-0x7fff")
    pkey &= MAX_PKEY
    default_full = False
    for flag in flags:
        key, _, value = (s.strip() for s in flag.partition("="))
        if key == "defmember" and value in ("full", "limited"):
            default_full = value == "full"
        elif key != "ipoib" or value:
            raise PartitionsError(f"{where}: unknown flag {flag!r} "
                                  f"(supported: defmember=full|limited, ipoib)")
    members: dict[str, bool] = {}
    for item in filter(None, (m.strip() for m in body.split(","))):
        host, eq, membership = (s.strip() for s in item.partition("="))
        if eq and membership not in ("full", "limited"):
            raise PartitionsError(f"{where}: membership of {host!r} must be full or limited, "
                                  f"got {membership!r}")
        full = membership == "full" if eq else default_full
        names = hosts if host == "ALL" else [host]
        if host != "ALL" and host not in known:
            raise PartitionsError(f"{where}: {host!r} is not a host of the fabric "
                                  f"({', '.join(sorted(known)) or 'no hosts'})")
        for h in names:
            if h in members and host != "ALL":
                raise PartitionsError(f"{where}: {h!r} listed twice in {name!r}")
            members[h] = full
    if not members:
        raise PartitionsError(f"{where}: partition {name!r} has no members")
    return Partition(name, pkey, tuple(members.items()), line)
