"""A small STF-like test format: table entries, packets in, expected packets out.

    # comment
    add TABLE KEY:VALUE ... ACTION(PARAM:VALUE, ...) [priority:N]
    setdefault TABLE ACTION(PARAM:VALUE, ...)
    mcast GROUP PORT [PORT ...]          # multicast group -> replicas (rid 0..n-1)
    mirror SESSION PORT                  # clone session -> egress port
    packet PORT HEX...                   # inject (spaces inside HEX are ignored)
    expect PORT HEX...                   # next packet out of PORT; '*' = any nibble
    expect PORT none                     # nothing (else) comes out of PORT

Key values: `0x0a000100/24` (lpm), `0x0800&&&0xff00` (ternary value&&&mask),
`10..20` (range), or a plain number (decimal or 0x hex). A key name may be the
P4Runtime match field name (`hdr.ipv4.dstAddr`). Tables and actions use their
fully-qualified names (`MyIngress.ipv4_lpm`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path


class StfError(ValueError):
    """A malformed line: `file:line: message`."""


@dataclass(frozen=True)
class KeyMatch:
    """One key of a table entry. kind: exact | lpm | ternary | range."""

    name: str
    kind: str
    value: int
    mask: int | None = None        # ternary
    prefix_len: int | None = None  # lpm
    high: int | None = None        # range: value..high


@dataclass(frozen=True)
class ActionCall:
    name: str
    params: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True)
class AddEntry:
    table: str
    keys: tuple[KeyMatch, ...]
    action: ActionCall
    priority: int | None = None
    line: int = 0


@dataclass(frozen=True)
class SetDefault:
    table: str
    action: ActionCall
    line: int = 0


@dataclass(frozen=True)
class McastGroup:
    group: int
    ports: tuple[int, ...]
    line: int = 0


@dataclass(frozen=True)
class MirrorSession:
    session: int
    port: int
    line: int = 0


@dataclass(frozen=True)
class Packet:
    port: int
    data: bytes
    line: int = 0


@dataclass(frozen=True)
class Expect:
    """An expected output packet; `pattern` is hex with '*' wildcard nibbles, or
    None for `expect PORT none`."""

    port: int
    pattern: str | None
    line: int = 0

    def matches(self, data: bytes) -> bool:
        if self.pattern is None:
            return False
        got = data.hex()
        if len(got) != len(self.pattern):
            return False
        return all(p == "*" or p == g for p, g in zip(self.pattern, got, strict=True))


Command = AddEntry | SetDefault | McastGroup | MirrorSession | Packet | Expect


@dataclass
class StfScript:
    commands: list[Command] = field(default_factory=list)

    @property
    def setup(self) -> list[Command]:
        return [c for c in self.commands if isinstance(c, (AddEntry, SetDefault, McastGroup,
                                                            MirrorSession))]


_NUM = r"(?:0[xX][0-9a-fA-F_]+|0[bB][01_]+|\d[\d_]*)"
_ACTION = re.compile(r"([\w.$]+)\s*\((.*?)\)\s*$")


def parse_int(text: str) -> int:
    return int(text.replace("_", ""), 0)


def _hex(text: str, wildcard: bool, where: str) -> str:
    h = re.sub(r"\s+", "", text).lower()
    allowed = "0123456789abcdef" + ("*" if wildcard else "")
    bad = [c for c in h if c not in allowed]
    if bad:
        raise StfError(f"{where}: bad character {bad[0]!r} in packet data")
    if len(h) % 2:
        raise StfError(f"{where}: packet data has an odd number of hex digits")
    return h


def _key(token: str, where: str) -> KeyMatch:
    name, sep, value = token.rpartition(":")
    if not sep or not name:
        raise StfError(f"{where}: expected KEY:VALUE, got {token!r}")
    try:
        if "&&&" in value:
            v, m = value.split("&&&")
            return KeyMatch(name, "ternary", parse_int(v), mask=parse_int(m))
        if "/" in value:
            v, p = value.split("/")
            return KeyMatch(name, "lpm", parse_int(v), prefix_len=int(p))
        if ".." in value:
            lo, hi = value.split("..")
            return KeyMatch(name, "range", parse_int(lo), high=parse_int(hi))
        return KeyMatch(name, "exact", parse_int(value))
    except ValueError:
        raise StfError(f"{where}: bad key value {value!r}") from None


def _action(text: str, where: str) -> ActionCall:
    m = _ACTION.match(text.strip())
    if not m:
        raise StfError(f"{where}: expected ACTION(PARAM:VALUE, ...), got {text.strip()!r}")
    params = []
    body = m.group(2).strip()
    if body:
        for part in body.split(","):
            pname, sep, pval = part.strip().partition(":")
            if not sep:
                raise StfError(f"{where}: action parameter {part.strip()!r} needs NAME:VALUE")
            try:
                params.append((pname.strip(), parse_int(pval.strip())))
            except ValueError:
                raise StfError(f"{where}: bad parameter value {pval.strip()!r}") from None
    return ActionCall(m.group(1), tuple(params))


def parse(text: str, filename: str = "<stf>") -> StfScript:
    script = StfScript()
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        where = f"{filename}:{lineno}"
        word, _, rest = line.partition(" ")
        rest = rest.strip()
        try:
            if word == "add":
                table, _, rest = rest.partition(" ")
                priority = None
                m = re.search(r"\s+priority:(" + _NUM + r")\s*$", rest)
                if m:
                    priority = parse_int(m.group(1))
                    rest = rest[:m.start()]
                paren = rest.find("(")
                if paren < 0:
                    raise StfError(f"{where}: add needs an ACTION(...)")
                head = rest[:paren].split()
                if not head:
                    raise StfError(f"{where}: add needs an action name")
                action = _action(head[-1] + rest[paren:], where)
                keys = tuple(_key(t, where) for t in head[:-1])
                script.commands.append(AddEntry(table, keys, action, priority, lineno))
            elif word == "setdefault":
                table, _, rest = rest.partition(" ")
                script.commands.append(SetDefault(table, _action(rest, where), lineno))
            elif word == "mcast":
                nums = [parse_int(x) for x in rest.split()]
                if len(nums) < 1:
                    raise StfError(f"{where}: mcast GROUP PORT...")
                script.commands.append(McastGroup(nums[0], tuple(nums[1:]), lineno))
            elif word == "mirror":
                nums = [parse_int(x) for x in rest.split()]
                if len(nums) != 2:
                    raise StfError(f"{where}: mirror SESSION PORT")
                script.commands.append(MirrorSession(nums[0], nums[1], lineno))
            elif word in ("packet", "expect"):
                port_text, _, data = rest.partition(" ")
                port = parse_int(port_text)
                if word == "packet":
                    script.commands.append(Packet(port, bytes.fromhex(_hex(data, False, where)),
                                                  lineno))
                elif data.strip() == "none":
                    script.commands.append(Expect(port, None, lineno))
                else:
                    script.commands.append(Expect(port, _hex(data, True, where), lineno))
            else:
                raise StfError(f"{where}: unknown command {word!r}")
        except ValueError as e:
            if isinstance(e, StfError):
                raise
            raise StfError(f"{where}: {e}") from None
    return script


def parse_file(path: str | Path) -> StfScript:
    p = Path(path)
    return parse(p.read_text(), str(p))
