"""P4Info by name: ids, widths, and P4Runtime entities built from names and ints.

The controller speaks in the program's own names ("FabricIngress.dlid_route",
"hdr.lrh.dlid", "FabricIngress.forward", "port"); this module turns them into
the ids and canonical byte strings P4Runtime carries, and back again for
reads and error messages. Names may be given in full or by their unique alias.

Canonical byte strings (P4Runtime spec, "Bytestrings"): the shortest
big-endian encoding of the value, at least one byte; a value wider than its
field is an error, not a silent truncation.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from google.protobuf import text_format
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2


class P4InfoError(KeyError):
    """A name, id or value the loaded P4Info does not have."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


def encode(value: int, bitwidth: int) -> bytes:
    """Canonical P4Runtime byte string of a non-negative int of `bitwidth` bits."""
    if value < 0 or value >> bitwidth:
        raise ValueError(f"value {value} does not fit in {bitwidth} bits")
    return value.to_bytes(max(1, (value.bit_length() + 7) // 8), "big")


def decode(data: bytes) -> int:
    return int.from_bytes(data, "big")


@dataclass(frozen=True)
class MatchField:
    id: int
    name: str
    bitwidth: int
    match_type: str  # "EXACT", "LPM", "TERNARY", "RANGE", "OPTIONAL"


@dataclass(frozen=True)
class Param:
    id: int
    name: str
    bitwidth: int


@dataclass(frozen=True)
class Table:
    id: int
    name: str
    match_fields: tuple[MatchField, ...]
    action_ids: tuple[int, ...]
    size: int

    def field(self, name: str) -> MatchField:
        for f in self.match_fields:
            if f.name == name:
                return f
        raise P4InfoError(f"table {self.name} has no match field {name!r}; "
                          f"it has {[f.name for f in self.match_fields]}")


@dataclass(frozen=True)
class Action:
    id: int
    name: str
    params: tuple[Param, ...]

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise P4InfoError(f"action {self.name} has no parameter {name!r}; "
                          f"it has {[p.name for p in self.params]}")


@dataclass(frozen=True)
class Counter:
    id: int
    name: str
    size: int
    unit: str  # "BYTES", "PACKETS", "BOTH"


@dataclass(frozen=True)
class Register:
    id: int
    name: str
    size: int
    bitwidth: int


_KINDS = ("tables", "actions", "counters", "direct_counters", "meters", "direct_meters",
          "registers", "digests", "action_profiles", "controller_packet_metadata",
          "value_sets")


class P4Info:
    """Lookups over one P4Info message."""

    def __init__(self, proto: p4info_pb2.P4Info) -> None:
        self.proto = proto
        self._by_name: dict[str, dict[str, object]] = {}
        self._by_id: dict[int, tuple[str, object]] = {}
        for kind in _KINDS:
            names: dict[str, object] = {}
            aliases: dict[str, list[object]] = {}
            for obj in getattr(proto, kind):
                names[obj.preamble.name] = obj
                aliases.setdefault(obj.preamble.alias, []).append(obj)
                self._by_id[obj.preamble.id] = (kind, obj)
            for alias, objs in aliases.items():
                if alias and len(objs) == 1 and alias not in names:
                    names[alias] = objs[0]
            self._by_name[kind] = names

    @classmethod
    def from_text(cls, text: str) -> P4Info:
        return cls(text_format.Parse(text, p4info_pb2.P4Info()))

    @classmethod
    def from_file(cls, path: Path | str) -> P4Info:
        try:
            return cls.from_text(Path(path).read_text())
        except text_format.ParseError as exc:
            raise P4InfoError(f"{path}: not a text P4Info: {exc}") from None

    def _get(self, kind: str, name: str):
        try:
            return self._by_name[kind][name]
        except KeyError:
            known = sorted(n for n in self._by_name[kind] if "." in n) or \
                sorted(self._by_name[kind])
            raise P4InfoError(f"P4Info has no {kind[:-1].replace('_', ' ')} {name!r}; "
                              f"known: {known}") from None

    def id(self, kind: str, name: str) -> int:
        return self._get(kind, name).preamble.id

    def name(self, obj_id: int) -> str:
        try:
            return self._by_id[obj_id][1].preamble.name
        except KeyError:
            raise P4InfoError(f"P4Info has no object with id {obj_id:#x}") from None

    def table(self, name: str) -> Table:
        t = self._get("tables", name)
        fields = tuple(MatchField(m.id, m.name, m.bitwidth,
                                  p4info_pb2.MatchField.MatchType.Name(m.match_type))
                       for m in t.match_fields)
        return Table(t.preamble.id, t.preamble.name, fields,
                     tuple(a.id for a in t.action_refs), t.size)

    def action(self, name: str) -> Action:
        a = self._get("actions", name)
        return Action(a.preamble.id, a.preamble.name,
                      tuple(Param(p.id, p.name, p.bitwidth) for p in a.params))

    def counter(self, name: str) -> Counter:
        c = self._get("counters", name)
        return Counter(c.preamble.id, c.preamble.name, c.size,
                       p4info_pb2.CounterSpec.Unit.Name(c.spec.unit))

    def register(self, name: str) -> Register:
        r = self._get("registers", name)
        return Register(r.preamble.id, r.preamble.name, r.size,
                        r.type_spec.bitstring.bit.bitwidth)

    def packet_metadata(self, header: str) -> tuple[Param, ...]:
        """Fields of the `packet_in` / `packet_out` controller header, in order."""
        m = self._get("controller_packet_metadata", header)
        return tuple(Param(f.id, f.name, f.bitwidth) for f in m.metadata)

    # ------------------------------------------------------------ entity builders

    def table_entry(self, table: str, match: dict[str, int | tuple[int, int]],
                    action: str | None = None, params: dict[str, int] | None = None,
                    priority: int = 0) -> p4runtime_pb2.TableEntry:
        """A TableEntry: exact fields take an int, LPM (value, prefix_len), ternary (value, mask)."""
        t = self.table(table)
        entry = p4runtime_pb2.TableEntry(table_id=t.id, priority=priority)
        for fname, value in match.items():
            f = t.field(fname)
            fm = entry.match.add(field_id=f.id)
            if f.match_type == "EXACT":
                fm.exact.value = encode(value, f.bitwidth)
            elif f.match_type == "LPM":
                fm.lpm.value, fm.lpm.prefix_len = encode(value[0], f.bitwidth), value[1]
            elif f.match_type == "TERNARY":
                fm.ternary.value = encode(value[0], f.bitwidth)
                fm.ternary.mask = encode(value[1], f.bitwidth)
            elif f.match_type == "OPTIONAL":
                fm.optional.value = encode(value, f.bitwidth)
            else:
                raise P4InfoError(f"{t.name}.{f.name}: {f.match_type} match not supported")
        if action is not None:
            entry.action.action.CopyFrom(self.action_call(action, params or {}))
        return entry

    def action_call(self, action: str, params: dict[str, int]) -> p4runtime_pb2.Action:
        a = self.action(action)
        missing = {p.name for p in a.params} - set(params)
        if missing:
            raise P4InfoError(f"action {a.name} needs parameter(s) {sorted(missing)}")
        call = p4runtime_pb2.Action(action_id=a.id)
        for pname, value in params.items():
            p = a.param(pname)
            call.params.add(param_id=p.id, value=encode(value, p.bitwidth))
        return call

    def describe(self, entity: p4runtime_pb2.Entity | p4runtime_pb2.TableEntry) -> str:
        """A table entry in the program's names, for messages: `t {f=v} -> a(p=v)`."""
        entry = entity.table_entry if isinstance(entity, p4runtime_pb2.Entity) else entity
        try:
            name = self.name(entry.table_id)
            t = self.table(name)
            by_id = {f.id: f.name for f in t.match_fields}
            keys = []
            for fm in entry.match:
                which = fm.WhichOneof("field_match_type")
                value = getattr(fm, which)
                text = str(decode(value.value)) if which in ("exact", "optional") else \
                    text_format.MessageToString(value, as_one_line=True)
                keys.append(f"{by_id.get(fm.field_id, fm.field_id)}={text}")
            out = f"{name} {{{', '.join(keys)}}}"
            if entry.action.HasField("action"):
                a = self.action(self.name(entry.action.action.action_id))
                pnames = {p.id: p.name for p in a.params}
                args = ", ".join(f"{pnames.get(p.param_id, p.param_id)}={decode(p.value)}"
                                 for p in entry.action.action.params)
                out += f" -> {a.name}({args})"
            return out
        except P4InfoError:
            return text_format.MessageToString(entry, as_one_line=True)
