"""STF test scripts: table entries, packets in, expected packets out.

Two dialects are read by one parser: p4c's (backends/bmv2/bmv2stf.py and
tools/stf/stf_parser.py, as used by testdata/p4_16_samples/*-bmv2.stf) and the
project's older one (`mcast`, `mirror`, `expect PORT none`, `priority:N`).

    # comment (to the end of the line); names may be quoted ("t", as p4testgen
    # writes them); a table may be named by its path from the package instance
    # (`main.ig.t`, `main.eg.t`: p4switch/stf_names.py)
    add TABLE [PRIORITY] KEY:VALUE ... ACTION(PARAM:VALUE, ...) [= NAME] [priority:N]
                                        # `= NAME` names the entry (check_counter, remove)
    setdefault TABLE ACTION(PARAM:VALUE, ...)
    packet PORT HEX...                  # inject (spaces inside HEX are ignored)
    expect PORT HEX... [$]              # next packet out of PORT, see below
    expect PORT                         # any number of packets may leave PORT
    expect PORT none                    # nothing more has left PORT at this point
    no_packet | wait                    # accepted (the in-process run is synchronous)
    mc_mgrp_create GROUP                # multicast group
    mc_node_create RID PORT...          # a node; handles count 0, 1, ... in order
    mc_node_associate GROUP HANDLE
    mc_node_update HANDLE PORT...
    mirroring_add SESSION PORT          # clone session -> egress port
    mirroring_add_mc SESSION GROUP      # clone session -> multicast group
    mirroring_delete SESSION
    register_write REGISTER INDEX VALUE | register_reset REGISTER | register_read REGISTER INDEX
    pvs_add VALUE_SET VALUE | pvs_remove VALUE_SET VALUE | pvs_clear VALUE_SET
    counter_write COUNTER INDEX PACKETS BYTES | counter_read COUNTER INDEX | counter_reset COUNTER
    check_counter COUNTER(INDEX) [packets|bytes OP NUMBER]   # OP: == != < <= > >=
    check_counter COUNTER(NAME) ...     # NAME (or $NAME): an entry named by `add ... = NAME`
    counter_verify COUNTER(INDEX) [packets|bytes OP NUMBER]
    meter_set_rates METER INDEX RATE:BURST ... | meter_array_set_rates METER RATE:BURST ...
    meter_get_rates METER INDEX
    remove all                          # delete every table entry added so far
    remove NAME                         # delete the entry named by `add ... = NAME`
    act_prof_create_member PROFILE ACTION(PARAM:VALUE, ...)   # member handles 0, 1, ...
    act_prof_create_group PROFILE                             # group handles 0, 1, ...
    act_prof_add_member_to_group PROFILE MEMBER GROUP
    act_prof_remove_member_from_group PROFILE MEMBER GROUP
    act_prof_modify_member PROFILE MEMBER ACTION(PARAM:VALUE, ...)
    act_prof_delete_member PROFILE MEMBER | act_prof_delete_group PROFILE GROUP
    table_indirect_add TABLE [PRIORITY] KEY:VALUE ... MEMBER
    table_indirect_add_with_group TABLE [PRIORITY] KEY:VALUE ... GROUP
    table_indirect_set_default TABLE MEMBER
    table_indirect_set_default_with_group TABLE GROUP
    mcast GROUP PORT [PORT ...]         # (project dialect) group -> replicas rid 0..n-1
    mirror SESSION PORT                 # (project dialect) clone session -> port

Expected packets follow p4c: `*` is a wildcard nibble, and the expected bytes
are a prefix of the packet (a longer packet matches) unless the data ends with
`$`, which requires the exact length. Expectations are per port, in order.

Key values: `0x0a000000/8` (lpm), `0x0a**` (nibble wildcards: a ternary mask, or
an lpm prefix of the spelled digits, as bmv2stf makes them), `0x0800&&&0xff00`
(ternary value&&&mask), `10..20` or `10->20` (range), or a plain number (decimal, 0x hex,
0b binary, 0o octal). A hex literal on a ternary key is masked to the digits it
spells (`0x0a` matches the low 8 bits), as in bmv2stf.

On a table with `implementation = action_profile(...)` or `action_selector(...)`,
`add` and `setdefault` create a new member of the table's action profile with
their action and point the entry (or the default) at it. The act_prof_* and
table_indirect_* commands are simple_switch_CLI's (with the action written as in
`add`); PROFILE is the action profile's name or a table that uses it, and member
and group handles count from 0 per profile in creation order, as bmv2 numbers
them (members made by `add`/`setdefault` count too; a new one takes the lowest
handle free, so a deleted one's handle is given again).

Counter and meter commands take simple_switch_CLI's operands (`counter_write` is
index, packets, bytes); on a direct counter or meter the index is an entry handle
(0, 1, ... per table in the order entries were added), as the CLI takes it.

Keywords are case-insensitive. A statement continues on the next line when a
line ends with `\\`, and packet data may continue on lines that hold only hex.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path


class StfError(ValueError):
    """A malformed line: `file:line: message`."""


@dataclass(frozen=True)
class KeyMatch:
    """One key of a table entry. kind: exact | lpm | ternary | range | literal.

    `literal` is a hex/binary/octal number as written, possibly with `*` nibble
    wildcards: its meaning depends on the table key's match kind (bmv2stf's
    makeMask / makeLpm); `value` has the wildcards as 0, `mask` covers the
    digits spelled out, `bits` is the number of bits the digits spell.
    """

    name: str
    kind: str
    value: int
    mask: int | None = None        # ternary, literal
    prefix_len: int | None = None  # lpm
    high: int | None = None        # range: value..high
    bits: int | None = None        # literal


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
    handle: str | None = None   # `= NAME`: a name for the entry


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
    None for `expect PORT none` / `expect PORT` (then `any` is True)."""

    port: int
    pattern: str | None
    line: int = 0
    exact: bool = False   # data ended with `$`: the length must match too
    any: bool = False     # `expect PORT`: any number of packets may leave PORT

    def matches(self, data: bytes) -> bool:
        if self.pattern is None:
            return self.any
        got = data.hex()
        if len(got) < len(self.pattern) or (self.exact and len(got) != len(self.pattern)):
            return False
        return all(p == "*" or p == g for p, g in zip(self.pattern, got))


@dataclass(frozen=True)
class Control:
    """A runtime command passed through to the switch's control plane (p4c passes
    these to simple_switch_CLI): `op` is the command word, `args` its operands
    (ints, names, or (rate, burst) pairs for meters)."""

    op: str
    args: tuple = ()
    line: int = 0


@dataclass(frozen=True)
class CounterCheck:
    """check_counter NAME(INDEX) [packets|bytes OP VALUE]; without a condition the
    counter must be 0 packets (as p4c's STF grammar defaults it)."""

    counter: str
    index: int
    what: str = "packets"
    op: str = "=="
    value: int = 0
    line: int = 0
    entry: str | None = None   # COUNTER(NAME): the entry `add ... = NAME` named


@dataclass(frozen=True)
class ProfileCommand:
    """An action profile command (act_prof_* / table_indirect_*): `target` is the
    profile (or a table using it) or the table; `handles` the member / group handles."""

    op: str
    target: str
    call: ActionCall | None = None
    keys: tuple[KeyMatch, ...] = ()
    handles: tuple[int, ...] = ()
    priority: int | None = None
    line: int = 0


Command = (AddEntry | SetDefault | McastGroup | MirrorSession | Packet | Expect | Control
           | CounterCheck | ProfileCommand)


@dataclass
class StfScript:
    commands: list[Command] = field(default_factory=list)

    @property
    def setup(self) -> list[Command]:
        return [c for c in self.commands
                if isinstance(c, (AddEntry, SetDefault, McastGroup, MirrorSession, Control,
                                  ProfileCommand))]

    def ports(self) -> set[int]:
        """Ports the script sends on or expects on (bmv2stf opens exactly these)."""
        return {c.port for c in self.commands if isinstance(c, (Packet, Expect))}


_NUM = r"(?:0[xX][0-9a-fA-F_]+|0[bB][01_]+|0[oO][0-7_]+|\d[\d_]*)"
_NAME = r"[A-Za-z_$][\w$.\[\]]*"
_ENTRY = r"[A-Za-z_$][\w$]*"   # an entry's name (`add ... = NAME`), p4c's STF ID
# An action name may hold any character but blanks and `(`: p4testgen quotes the names
# that @name annotations give ("set#b"), as a p4c STF string token.
_ACTION = re.compile(r"(" + _NAME + r"|[^\s(]+)\s*\((.*)\)\s*$", re.S)
_CONTROL_ARITY = {  # op -> (min ints/names, kinds) ; 'n' int, 's' name, '*' more ints
    "mc_mgrp_create": "n", "mc_mgrp_destroy": "n", "mc_node_create": "n*",
    "mc_node_update": "n*", "mc_node_associate": "nn", "mc_node_dissociate": "nn",
    "mc_node_destroy": "n", "mirroring_add": "nn", "mirroring_add_mc": "nn",
    "mirroring_delete": "n", "mirroring_get": "n", "register_read": "sn",
    "register_write": "snn", "register_reset": "s", "counter_read": "sn",
    "counter_write": "snnn", "counter_reset": "s", "meter_get_rates": "sn",
    "pvs_add": "sn", "pvs_remove": "sn", "pvs_clear": "s",
}
_OPS = ("==", "!=", "<=", ">=", "<", ">")


def parse_int(text: str) -> int:
    t = text.replace("_", "")
    if len(t) > 1 and t[0] == "0" and t[1].isdigit():
        return int(t, 10)  # p4c's STF reads 010 as ten, Python refuses it
    return int(t, 0)


def _hex(text: str, wildcard: bool, where: str) -> str:
    h = re.sub(r"\s+", "", text).lower()
    allowed = "0123456789abcdef" + ("*" if wildcard else "")
    bad = [c for c in h if c not in allowed]
    if bad:
        raise StfError(f"{where}: bad character {bad[0]!r} in packet data")
    if len(h) % 2 and not wildcard:  # an expectation may end mid-byte (a nibble prefix)
        raise StfError(f"{where}: packet data has an odd number of hex digits")
    return h


def _packet_bytes(h: str, where: str) -> bytes:
    """Input packet bytes. As p4c's runner converts them two digits at a time, a
    lone last digit is a whole byte (`20 0` is 0x20 0x00, `0 f` ends in 0x0f)."""
    if "*" in h:
        raise StfError(f"{where}: bad character '*' in packet data")
    if len(h) % 2:
        h = h[:-1] + "0" + h[-1]
    return bytes.fromhex(h)


def _literal(text: str) -> tuple[int, int, int] | None:
    """(value, mask, bits) of a 0x/0b/0o literal with optional `*` digits, else None."""
    t = text.replace("_", "").lower()
    for prefix, bits in (("0x", 4), ("0b", 1), ("0o", 3)):
        if t.startswith(prefix) and len(t) > 2:
            digits = t[2:]
            base = 1 << bits
            value = mask = 0
            for d in digits:
                if d == "*":
                    value, mask = value << bits, mask << bits
                else:
                    v = int(d, base)  # ValueError on a bad digit
                    value, mask = (value << bits) | v, (mask << bits) | (base - 1)
            return value, mask, bits * len(digits)
    return None


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
            lit = _literal(v)
            return KeyMatch(name, "lpm", lit[0] if lit else parse_int(v), prefix_len=parse_int(p))
        if ".." in value or "->" in value:   # `lo..hi`, or simple_switch_CLI's `lo->hi`
            lo, hi = value.split(".." if ".." in value else "->")
            return KeyMatch(name, "range", parse_int(lo), high=parse_int(hi))
        lit = _literal(value)
        if lit is not None:
            return KeyMatch(name, "literal", lit[0], mask=lit[1], bits=lit[2])
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
            if not sep or not pname.strip():
                raise StfError(f"{where}: action parameter {part.strip()!r} needs NAME:VALUE")
            try:
                params.append((pname.strip(), parse_int(pval.strip())))
            except ValueError:
                raise StfError(f"{where}: bad parameter value {pval.strip()!r}") from None
    return ActionCall(m.group(1), tuple(params))


def _opening_paren(text: str) -> int:
    """Where the action's argument list opens: the `(` matching the final `)` (a key
    may hold parentheses of its own, `h.isValid():1`); -1 if there is none."""
    if not text.endswith(")"):
        return -1
    depth = 0
    for i in range(len(text) - 1, -1, -1):
        if text[i] == ")":
            depth += 1
        elif text[i] == "(":
            depth -= 1
            if depth == 0:
                return i
    return -1


def _add(rest: str, lineno: int, where: str) -> AddEntry:
    table, _, rest = rest.partition(" ")
    if not table:
        raise StfError(f"{where}: add needs a table name")
    priority = None
    m = re.search(r"\s*priority:(" + _NUM + r")\s*$", rest)
    if m:
        priority = parse_int(m.group(1))
        rest = rest[:m.start()]
    handle = None
    m = re.search(r"\)\s*=\s*(" + _ENTRY + r")\s*$", rest)   # `= NAME`: names the entry
    if m:
        handle = m.group(1)
        rest = rest[:m.start()] + ")"
    paren = _opening_paren(rest.rstrip())
    if paren < 0 or not rest.rstrip().endswith(")"):
        raise StfError(f"{where}: add needs an ACTION(...)")
    head = rest[:paren].split()
    if not head:
        raise StfError(f"{where}: add needs an action name")
    if priority is None and head and re.fullmatch(r"\d+", head[0]):
        priority = int(head.pop(0))
    if not head:
        raise StfError(f"{where}: add needs an action name")
    action = _action(head[-1] + rest[paren:], where)
    keys = tuple(_key(t, where) for t in head[:-1])
    return AddEntry(table, keys, action, priority, lineno, handle)


def _expect(rest: str, lineno: int, where: str) -> Expect:
    port_text, _, data = rest.partition(" ")
    port = parse_int(port_text)
    data = data.strip()
    if data == "none":
        return Expect(port, None, lineno)
    if not data:
        return Expect(port, None, lineno, any=True)
    exact = data.endswith("$")
    if exact:
        data = data[:-1]
    if "$" in data:
        raise StfError(f"{where}: '$' may only end the expected packet data")
    return Expect(port, _hex(data, True, where), lineno, exact=exact)


def _control(op: str, rest: str, lineno: int, where: str) -> Control:
    words = rest.split()
    if op in ("meter_set_rates", "meter_array_set_rates"):
        fixed = 2 if op == "meter_set_rates" else 1
        if len(words) < fixed + 1:
            raise StfError(f"{where}: {op} needs a meter, "
                           f"{'an index, ' if fixed == 2 else ''}and RATE:BURST pairs")
        rates = []
        for w in words[fixed:]:
            rate, sep, burst = w.partition(":")
            if not sep:
                raise StfError(f"{where}: meter rate {w!r} needs RATE:BURST")
            rates.append((float(rate), parse_int(burst)))
        head = (words[0],) if fixed == 1 else (words[0], parse_int(words[1]))
        return Control(op, head + (tuple(rates),), lineno)
    kinds = _CONTROL_ARITY[op]
    more = kinds.endswith("*")
    kinds = kinds.rstrip("*")
    if len(words) < len(kinds) or (not more and len(words) != len(kinds)):
        raise StfError(f"{where}: {op} takes {len(kinds)}{' or more' if more else ''} "
                       f"operands, got {len(words)}")
    args: list = []
    for i, w in enumerate(words):
        kind = kinds[i] if i < len(kinds) else "n"
        args.append(w if kind == "s" else parse_int(w))
    return Control(op, tuple(args), lineno)


def _check_counter(rest: str, lineno: int, where: str) -> CounterCheck:
    m = re.fullmatch(r"(" + _NAME + r")\s*\(\s*([\w$]+)\s*\)\s*(?:(packets|bytes)\s*"
                     r"(==|!=|<=|>=|<|>)\s*(" + _NUM + r"))?", rest.strip())
    if not m:
        raise StfError(f"{where}: expected COUNTER(INDEX) [packets|bytes OP NUMBER]")
    index, entry = m.group(2), None
    if not re.fullmatch(_NUM, index):   # p4c's id_or_index: an entry's `= NAME`
        if not re.fullmatch(_ENTRY, index):
            raise StfError(f"{where}: counter index {index!r} is neither a number nor "
                           "an entry's NAME (add ... = NAME)")
        index, entry = "0", index
    if m.group(3):
        return CounterCheck(m.group(1), parse_int(index), m.group(3), m.group(4),
                            parse_int(m.group(5)), lineno, entry)
    return CounterCheck(m.group(1), parse_int(index), line=lineno, entry=entry)


_PROFILE_OPS = ("act_prof_create_member", "act_prof_create_group",
                "act_prof_add_member_to_group", "act_prof_modify_member",
                "act_prof_delete_member", "act_prof_remove_member_from_group",
                "act_prof_delete_group", "table_indirect_add",
                "table_indirect_add_with_group", "table_indirect_set_default",
                "table_indirect_set_default_with_group")


def _profile(op: str, rest: str, lineno: int, where: str) -> ProfileCommand:
    target, _, rest = rest.partition(" ")
    words = rest.split()
    if not target:
        raise StfError(f"{where}: {op} needs a name")
    if op == "act_prof_create_member":
        return ProfileCommand(op, target, call=_action(rest, where), line=lineno)
    if op == "act_prof_modify_member":
        handle, _, act = rest.strip().partition(" ")
        if not re.fullmatch(_NUM, handle):
            raise StfError(f"{where}: {op} PROFILE MEMBER ACTION(PARAM:VALUE, ...)")
        return ProfileCommand(op, target, call=_action(act, where),
                              handles=(parse_int(handle),), line=lineno)
    if op == "table_indirect_add" or op == "table_indirect_add_with_group":
        if not words or not re.fullmatch(_NUM, words[-1]):
            raise StfError(f"{where}: {op} TABLE [PRIORITY] KEY:VALUE ... HANDLE")
        prio = None
        if len(words) > 1 and re.fullmatch(r"\d+", words[0]):
            prio = int(words.pop(0))
        keys = tuple(_key(w, where) for w in words[:-1])
        return ProfileCommand(op, target, keys=keys, handles=(parse_int(words[-1]),),
                              priority=prio, line=lineno)
    count = {"act_prof_create_group": 0, "act_prof_add_member_to_group": 2,
             "act_prof_remove_member_from_group": 2}.get(op, 1)
    if len(words) != count or not all(re.fullmatch(_NUM, w) for w in words):
        raise StfError(f"{where}: {op} takes a name and {count} handle(s)")
    return ProfileCommand(op, target, handles=tuple(parse_int(w) for w in words), line=lineno)


def _statement(word: str, rest: str, lineno: int, where: str) -> Command | None:
    if word == "add":
        return _add(rest, lineno, where)
    if word == "setdefault":
        table, _, act = rest.partition(" ")
        return SetDefault(table, _action(act, where), lineno)
    if word == "packet":
        port_text, _, data = rest.partition(" ")
        return Packet(parse_int(port_text), _packet_bytes(_hex(data, True, where), where),
                      lineno)
    if word == "expect":
        return _expect(rest, lineno, where)
    if word == "mcast":
        nums = [parse_int(x) for x in rest.split()]
        if len(nums) < 1:
            raise StfError(f"{where}: mcast GROUP PORT...")
        return McastGroup(nums[0], tuple(nums[1:]), lineno)
    if word == "mirror":
        nums = [parse_int(x) for x in rest.split()]
        if len(nums) != 2:
            raise StfError(f"{where}: mirror SESSION PORT")
        return MirrorSession(nums[0], nums[1], lineno)
    if word in _CONTROL_ARITY or word in ("meter_set_rates", "meter_array_set_rates"):
        return _control(word, rest, lineno, where)
    if word in _PROFILE_OPS:
        return _profile(word, rest, lineno, where)
    if word in ("check_counter", "counter_verify"):
        return _check_counter(rest, lineno, where)
    if word == "remove":
        if rest.strip().lower() == "all":
            return Control("remove_all", (), lineno)
        if not re.fullmatch(_ENTRY, rest.strip()):
            raise StfError(f"{where}: remove takes 'all' or an entry's NAME (add ... = NAME)")
        return Control("remove_entry", (rest.strip(),), lineno)
    if word in ("wait", "no_packet"):
        if rest.strip():
            raise StfError(f"{where}: {word} takes no operands")
        return Control(word, (), lineno)
    raise StfError(f"{where}: unsupported STF command {word!r} at line {lineno}")


_CONTINUATION = re.compile(r"[0-9a-fA-F*$][0-9a-fA-F*$\s]*$")


def _without_comment(line: str) -> str:
    """The line up to its `#` comment; a `#` inside a quoted name is part of the name
    (p4c's STF lexer reads the quoted string first: `add "t.!@#$_1" ...`)."""
    quoted = False
    for i, ch in enumerate(line):
        if ch == '"':
            quoted = not quoted
        elif ch == "#" and not quoted:
            return line[:i]
    return line


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """(first line number, statement text): comments removed, `\\` continuations and
    hex-only continuation lines of packet/expect joined to their statement."""
    out: list[tuple[int, str]] = []
    pending: tuple[int, str] | None = None
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = _without_comment(raw).strip()
        if pending is not None:
            start, acc = pending
            acc = acc + " " + line.rstrip("\\").strip()
            pending = (start, acc) if line.endswith("\\") else None
            if pending is None:
                out.append((start, acc))
            continue
        if not line:
            continue
        if (out and _CONTINUATION.fullmatch(line)
                and out[-1][1].split(" ", 1)[0].lower() in ("packet", "expect")
                and not out[-1][1].rstrip().endswith("$")):
            out[-1] = (out[-1][0], out[-1][1] + " " + line)
            continue
        if line.endswith("\\"):
            pending = (lineno, line[:-1].strip())
        else:
            out.append((lineno, line))
    if pending is not None:
        out.append(pending)
    return out


def parse(text: str, filename: str = "<stf>") -> StfScript:
    script = StfScript()
    for lineno, line in _logical_lines(text):
        where = f"{filename}:{lineno}"
        word, _, rest = line.partition(" ")
        if word.lower() not in ("packet", "expect"):
            # p4testgen's STFs quote every name: add "t" "k":1 "a"("p":2); a quoted key
            # may hold spaces ("h.a & 0xff"), which the name lookup ignores
            rest = re.sub(r'"([^"]*)"', lambda m: re.sub(r"\s+", "", m.group(1)), rest)
        try:
            cmd = _statement(word.lower(), rest.strip(), lineno, where)
        except StfError:
            raise
        except ValueError as e:
            raise StfError(f"{where}: {e}") from None
        if cmd is not None:
            script.commands.append(cmd)
    return script


def parse_file(path: str | Path) -> StfScript:
    p = Path(path)
    try:
        text = p.read_text()
    except UnicodeDecodeError:
        raise StfError(f"{p}: not a text file") from None
    return parse(text, str(p))
