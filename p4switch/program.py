"""A loaded bmv2 JSON program: validated, laid out, and compiled to Python.

Per-packet state is one flat list `S` (the "PHV"): every header gets a validity
slot, a "raw" slot (the byte offset it was extracted from, or -1), a "dirty"
slot (set when the program writes to it) and one slot per field; metadata
instances get field slots. The deparser returns the input frame when nothing
changed, patches modified headers into a copy when the layout is unchanged,
and otherwise copies untouched headers as byte slices and packs the others. Fields no code ever reads are
not decoded at extract time.

The parser, both pipelines, the deparser and the checksums are compiled at
load time to Python source (see `Program.source`, printed by
`python -m p4switch.program --dump prog.json`) in which tables are dict
lookups, actions are inlined, and expressions are Python expressions on ints.
bmv2's infinite-precision arithmetic is Python's; values are truncated to the
field width when stored, as bmv2 does.
"""

from __future__ import annotations

import json
import random
import re
import sys
import time
from collections.abc import Callable

from p4switch import externs, header_ops, json_checks
from p4switch.runtime_api import ActionCall, MatchKind, MatchParam
from p4switch.tables import ActionProfile, Entry, KeyField, Table

# v1model instance types (simple_switch's values)
INSTANCE_NORMAL = 0
INSTANCE_INGRESS_CLONE = 1
INSTANCE_EGRESS_CLONE = 2
INSTANCE_RECIRC = 4
INSTANCE_REPLICATION = 5
INSTANCE_RESUBMIT = 6

DROP_PORT = 511

STANDARD_FIELDS = (
    "ingress_port", "egress_spec", "egress_port", "instance_type", "packet_length",
    "enq_timestamp", "enq_qdepth", "deq_timedelta", "deq_qdepth",
    "ingress_global_timestamp", "egress_global_timestamp", "mcast_grp", "egress_rid",
    "checksum_error", "parser_error", "priority",
)

# bmv2's built-in values, used when the JSON does not declare the core errors.
CORE_ERRORS = {
    "NoError": 0, "PacketTooShort": 1, "NoMatch": 2, "StackOutOfBounds": 3,
    "HeaderTooShort": 4, "ParserTimeout": 5, "ParserInvalidArgument": 6,
}

# Fixed slots of S.
PKT = 0        # the packet bytes raw offsets refer to
PAYLOAD = 1    # offset where the parser stopped
CLONE = 2      # clone session requested (-1: none)
CLONE_FL = 3   # field list to preserve in the clone
RESUBMIT = 4   # field list id + 1, 0: not requested
RECIRC = 5     # field list id + 1, 0: not requested
DIGESTS = 6    # None or list of learn list ids
TRUNC = 7      # truncate to this many bytes (0: no)
SPECIAL = 8    # 1 once any of CLONE, RESUBMIT, RECIRC, DIGESTS was requested
FIXED_SLOTS = 9

BYTE_ALIGNED_READERS = {8: "{p}[{o}]", 16: "({p}[{o}] << 8 | {p}[{o}+1])"}


TAIL_DUPLICATION_LINES = 60  # see _emit_graph
_SLOT_RE = re.compile(r"\bS\[(\d+)\]")
_S_RE = re.compile(r"\bS\b")
_MAT_RE = re.compile(r"^_mat_(\d+)\(S\)$")
_LOCAL_RE = re.compile(r"\bS_(\d+)\b")


class ProgramError(ValueError):
    """A bmv2 JSON the switch cannot run; the message names the element."""


class PipelineAbort(Exception):
    """An assert/assume failed: the packet is dropped and the failure logged."""


class Header:
    """Layout of one header (or metadata) instance in S."""

    def __init__(self, name: str, type_name: str, metadata: bool,
                 fields: list[tuple[str, int | str, bool]]):
        self.name = name
        self.type_name = type_name
        self.metadata = metadata
        self.fields = fields  # (name, width or "*", signed)
        self.valid = -1
        self.raw = -1
        self.dirty = -1
        self.slots: dict[str, int] = {}
        self.var_field: str | None = None
        self.var_width = -1  # slot holding the current width of the varbit field
        self.max_bytes: int | None = None  # header type's max_length (varbit headers)
        self.nbits = sum(w for _f, w, _s in fields if w != "*")
        self.index = -1

    @property
    def fixed_bytes(self) -> int:
        return self.nbits // 8


def _hex(v) -> int:
    if isinstance(v, int):
        return v
    if not isinstance(v, str):
        raise ValueError(f"expected a hexstring, found {v!r}")
    return int(v, 16)


def _indent(lines: list[str], n: int = 1) -> list[str]:
    pad = "    " * n
    return [pad + ln for ln in lines]


class Program:
    """A validated, compiled bmv2 JSON program and its run-time state."""

    def __init__(self, j: dict, trace: Callable[[str], None] | None = None,
                 clock_us: Callable[[], float] | None = None):
        if not isinstance(j, dict):
            raise ProgramError("bmv2 JSON: expected a JSON object at the top level")
        try:
            json_checks.check(j)
        except json_checks.JsonRuleError as e:
            raise ProgramError(str(e)) from None
        self.json = j
        self.trace = trace
        self.clock_us = clock_us or (lambda: time.monotonic() * 1e6)
        self.ns: dict = {"__builtins__": __builtins__}
        self._uid = 0
        self._const_args: tuple[int, ...] | None = None  # action data known at load time
        self._ad_widths: tuple = ()  # widths of the current action's parameters
        self._wid: dict[str, int] = {}  # generated expression -> known bit width
        self._extra_source: list[str] = []  # helper functions the generated code calls
        self._stack_keys: dict[str, str] = {}  # header stack -> its descriptors' name
        self._layout()
        self._objects()
        self._scan_uses()
        self.source = self._generate()
        try:
            code = compile(self.source, "<p4switch program>", "exec")
        except SyntaxError as e:  # a bug in the generator, not in the JSON
            raise ProgramError(f"internal code generation error: {e}") from e
        exec(code, self.ns)
        self.parse = self.ns["parse"]
        self.ingress = self.ns["ingress"]
        self.egress = self.ns["egress"]
        self.deparse = self.ns["deparse"]
        # parse + ingress + egress + deparse as one function on local variables
        # (see _gen_fused); None if this program cannot be fused.
        self.fused_source = None if trace else self._gen_fused()
        self.fused = None
        if self.fused_source is not None:
            try:
                exec(compile(self.fused_source, "<p4switch fused>", "exec"), self.ns)
            except SyntaxError as e:
                raise ProgramError(f"internal code generation error (fused): {e}") from e
            self.fused = self.ns["fused"]

    # ------------------------------------------------------------------ layout
    def _list(self, key: str) -> list:
        v = self.json.get(key, [])
        if v is None:
            return []
        if not isinstance(v, list):
            raise ProgramError(f"{key}: expected a list, found {type(v).__name__}")
        return v

    def _layout(self) -> None:
        types = {}
        max_lengths: dict[str, int] = {}
        for i, t in enumerate(self._list("header_types")):
            where = f"header_types[{i}]"
            try:
                fields = []
                for f in t["fields"]:
                    if not isinstance(f, list) or len(f) not in (2, 3):
                        raise ProgramError(f"{where} ({t.get('name')}): bad field {f!r}")
                    w = f[1]
                    if w != "*" and (not isinstance(w, int) or w < 0):
                        raise ProgramError(f"{where} ({t['name']}): bad width for field {f[0]!r}")
                    fields.append((f[0], w, bool(f[2]) if len(f) == 3 else False))
                types[t["name"]] = fields
                if isinstance(t.get("max_length"), int):
                    max_lengths[t["name"]] = t["max_length"]
            except (KeyError, TypeError) as e:
                raise ProgramError(f"{where}: missing or bad attribute {e}") from None
        self.headers: dict[str, Header] = {}
        self.headers_by_id: dict[int, Header] = {}
        slot = FIXED_SLOTS
        template: list = [b"", 0, -1, 0, 0, 0, None, 0, 0]
        for i, h in enumerate(self._list("headers")):
            where = f"headers[{i}]"
            try:
                name, tname = h["name"], h["header_type"]
            except (KeyError, TypeError) as e:
                raise ProgramError(f"{where}: missing attribute {e}") from None
            if tname not in types:
                raise ProgramError(f"{where} ({name}): unknown header_type {tname!r}")
            hd = Header(name, tname, bool(h.get("metadata", False)), types[tname])
            hd.max_bytes = max_lengths.get(tname)
            if not hd.metadata and hd.nbits % 8:
                raise ProgramError(f"{where} ({name}): header width {hd.nbits} bits "
                                   "is not a multiple of 8")
            hd.valid, hd.raw, hd.dirty = slot, slot + 1, slot + 2
            template += [1 if hd.metadata else 0, -1, 0]
            slot += 3
            for fname, w, _signed in hd.fields:
                hd.slots[fname] = slot
                template.append(0)
                slot += 1
                if w == "*":
                    hd.var_field = fname
                    hd.var_width = slot
                    template.append(0)
                    slot += 1
            hd.index = len(self.headers)
            self.headers[name] = hd
            self.headers_by_id[h.get("id", i)] = hd
        self.stacks: dict[str, list[Header]] = {}
        self.stack_next: dict[str, int] = {}
        for i, s in enumerate(self._list("header_stacks")):
            where = f"header_stacks[{i}]"
            try:
                members = [self.headers_by_id[x] for x in s["header_ids"]]
            except KeyError as e:
                raise ProgramError(f"{where} ({s.get('name')}): unknown header id {e}") from None
            self.stacks[s["name"]] = members
            self.stack_next[s["name"]] = slot
            template.append(0)
            slot += 1
        if self._list("header_union_stacks"):
            raise ProgramError("header_union_stacks: not supported by this switch")
        self.unions = {}
        self.union_siblings: dict[str, list[Header]] = {}
        for u in self._list("header_unions"):
            try:
                members = [self.headers_by_id[x] for x in u["header_ids"]]
            except KeyError as e:
                raise ProgramError(f"header_unions ({u.get('name')}): unknown header id "
                                   f"{e}") from None
            self.unions[u["name"]] = members
            for m in members:  # at most one member valid: validating one clears the rest
                self.union_siblings[m.name] = [x for x in members if x is not m]
        # Standard metadata, through field_aliases where the program renames it.
        aliases = {}
        for a in self._list("field_aliases"):
            aliases[a[0]] = tuple(a[1])
        self.std: dict[str, int] = {}
        sm = self.headers.get("standard_metadata")
        for f in STANDARD_FIELDS:
            target = None
            for prefix in ("standard_metadata", "intrinsic_metadata", "queueing_metadata"):
                if f"{prefix}.{f}" in aliases:
                    target = aliases[f"{prefix}.{f}"]
            if target is not None and target[0] in self.headers and \
                    target[1] in self.headers[target[0]].slots:
                self.std[f] = self.headers[target[0]].slots[target[1]]
            elif sm is not None and f in sm.slots:
                self.std[f] = sm.slots[f]
            else:  # the program does not declare it: keep a hidden slot
                self.std[f] = slot
                template.append(0)
                slot += 1
        self.nslots = slot
        self.template = template
        # Slots a new packet instance keeps from its parent (E2E clone): headers.
        self.header_slots = [PKT, PAYLOAD]
        for hd in self.headers.values():
            if not hd.metadata:
                self.header_slots += [hd.valid, hd.raw, hd.dirty, *hd.slots.values()]
                if hd.var_width >= 0:
                    self.header_slots.append(hd.var_width)
        self.header_slots += list(self.stack_next.values())
        self.errors = dict(CORE_ERRORS)
        for i, e in enumerate(self._list("errors")):
            if not isinstance(e, list) or len(e) != 2:
                raise ProgramError(f"errors[{i}]: expected [name, value], found {e!r}")
            self.errors[e[0]] = e[1]

    # --------------------------------------------------------------- objects
    def _objects(self) -> None:
        self.actions: dict[int, dict] = {}
        self.action_names: dict[str, int] = {}
        for i, a in enumerate(self._list("actions")):
            if "id" not in a or "name" not in a:
                raise ProgramError(f"actions[{i}]: missing id or name")
            self.actions[a["id"]] = a
            self.action_names.setdefault(a["name"], a["id"])
        self.counters: dict[str, externs.CounterArray] = {}
        self.direct_counter_tables: dict[str, str] = {}
        for c in self._list("counter_arrays"):
            if c.get("is_direct"):
                self.direct_counter_tables[c["name"]] = c.get("binding")
                continue
            self.counters[c["name"]] = externs.CounterArray(c["name"], int(c.get("size", 0)))
        self.registers = {r["name"]: externs.RegisterArray(r["name"], int(r["size"]),
                                                           int(r["bitwidth"]))
                          for r in self._list("register_arrays")}
        self.meters: dict[str, externs.MeterArray] = {}
        self.direct_meters: dict[str, dict] = {}
        for m in self._list("meter_arrays"):
            if m.get("is_direct"):
                self.direct_meters[m.get("binding")] = m
            else:
                self.meters[m["name"]] = externs.MeterArray(
                    m["name"], int(m.get("size", 0)), m.get("type") == "bytes")
        self.field_lists: dict[int, tuple[int, ...]] = {}
        for i, fl in enumerate(self._list("field_lists")):
            slots = []
            for el in fl.get("elements", []):
                if el.get("type") == "field":
                    slots.append(self._field_slot(el["value"], f"field_lists[{i}]"))
            self.field_lists[fl["id"]] = tuple(slots)
        self.learn_lists: dict[int, tuple[str, tuple[int, ...]]] = {}
        for i, ll in enumerate(self._list("learn_lists")):
            slots = tuple(self._field_slot(el["value"], f"learn_lists[{i}]")
                          for el in ll.get("elements", []) if el.get("type") == "field")
            self.learn_lists[ll["id"]] = (ll["name"], slots)
        self.calculations = {c["name"]: (i, c) for i, c in enumerate(self._list("calculations"))}
        for name, (i, c) in self.calculations.items():
            if c.get("algo") not in externs.HASH_ALGORITHMS:
                raise ProgramError(f"calculations[{i}] ({name}): unsupported algo "
                                   f"{c.get('algo')!r}")
        self.parse_vsets = {v["name"]: set() for v in self._list("parse_vsets")}
        self.tables: dict[str, Table] = {}
        self.profiles: dict[str, ActionProfile] = {}
        pipelines = self._list("pipelines")
        self.pipelines = {}
        for pi, p in enumerate(pipelines):
            self.pipelines[p.get("name")] = (pi, p)
        for want in ("ingress", "egress"):
            if want not in self.pipelines:
                raise ProgramError(f"pipelines: no pipeline named {want!r} (v1model needs "
                                   "'ingress' and 'egress')")
        if not self._list("parsers"):
            raise ProgramError("parsers: the program has no parser")
        if not self._list("deparsers"):
            raise ProgramError("deparsers: the program has no deparser")
        arity = {aid: len(a.get("runtime_data", [])) for aid, a in self.actions.items()}
        for pi, p in enumerate(pipelines):
            for ap in p.get("action_profiles", []):
                self.profiles[ap["name"]] = ActionProfile(
                    ap["name"], int(ap.get("max_size", 1 << 16)), {}, arity)
            for ti, t in enumerate(p.get("tables", [])):
                where = f"pipelines[{pi}].tables[{ti}]"
                self.tables[t.get("name")] = self._make_table(t, where, arity)

    def _field_slot(self, ref, where: str) -> int:
        if not isinstance(ref, list) or len(ref) != 2:
            raise ProgramError(f"{where}: bad field reference {ref!r}")
        h, f = ref
        hd = self.headers.get(h)
        if hd is None:
            raise ProgramError(f"{where}: unknown header {h!r} in field {h}.{f}")
        if f == "$valid$":
            return hd.valid
        if f not in hd.slots:
            raise ProgramError(f"{where}: header {h!r} has no field {f!r}")
        return hd.slots[f]

    def _field_width(self, ref) -> int:
        h, f = ref
        if f == "$valid$":
            return 1
        for fname, w, _s in self.headers[h].fields:
            if fname == f:
                return w if w != "*" else 0
        return 0

    def _make_table(self, t: dict, where: str, arity: dict[int, int]) -> Table:
        name = t.get("name")
        if not isinstance(name, str):
            raise ProgramError(f"{where}: missing name")
        mt = t.get("match_type", "exact")
        if mt not in ("exact", "lpm", "ternary", "range"):
            raise ProgramError(f"{where}: unknown match_type {mt!r}")
        keys = []
        for ki, k in enumerate(t.get("key", [])):
            kind = k.get("match_type")
            if kind not in ("exact", "lpm", "ternary", "range", "valid", "optional"):
                raise ProgramError(f"{where}.key[{ki}]: unknown match_type {kind!r}")
            if kind == "valid":
                target = k["target"] if isinstance(k["target"], str) else k["target"][0]
                if target not in self.headers:
                    raise ProgramError(f"{where}.key[{ki}]: unknown header {target!r}")
                width = 1
            else:
                self._field_slot(k.get("target"), f"{where}.key[{ki}]")
                width = self._field_width(k["target"])
            keys.append(KeyField(kind, width, k.get("name") or str(k.get("target"))))
        names = t.get("actions", [])
        ids = t.get("action_ids")
        if ids is None:
            ids = []
            for n in names:
                if n not in self.action_names:
                    raise ProgramError(f"{where} ({name}): unknown action {n!r}")
                ids.append(self.action_names[n])
        action_ids = {}
        for n, aid in zip(names, ids):
            if aid not in self.actions:
                raise ProgramError(f"{where} ({name}): unknown action id {aid}")
            action_ids[n] = aid
            # Also accept the unqualified name a controller may use.
            action_ids.setdefault(n.rsplit(".", 1)[-1], aid)
        ttype = t.get("type", "simple")
        if ttype not in ("simple", "indirect", "indirect_ws"):
            raise ProgramError(f"{where} ({name}): unknown table type {ttype!r}")
        profile = None
        if ttype != "simple":
            profile = self.profiles.get(t.get("action_profile"))
            if profile is None:
                raise ProgramError(f"{where} ({name}): unknown action_profile "
                                   f"{t.get('action_profile')!r}")
            profile._action_ids.update(action_ids)
        default = Entry(-1, ())
        de = t.get("default_entry")
        if de:
            aid = de.get("action_id")
            if aid not in self.actions:
                raise ProgramError(f"{where} ({name}): default_entry: unknown action id {aid}")
            data = tuple(_hex(x) for x in de.get("action_data", []))
            if len(data) != arity[aid] and de.get("action_data") is not None:
                raise ProgramError(f"{where} ({name}): default_entry: action "
                                   f"{self.actions[aid]['name']} takes {arity[aid]} "
                                   f"arguments, got {len(data)}")
            default = Entry(aid, data + (0,) * (arity[aid] - len(data)))
        table = Table(name, keys, action_ids, arity, int(t.get("max_size", 1024)), default,
                      profile, bool(t.get("with_counters", False)))
        table.default_const = bool(de and de.get("action_const"))
        for ei, ent in enumerate(t.get("entries", []) or []):
            ew = f"{where}.entries[{ei}]"
            params = []
            for mk in ent.get("match_key", []):
                kind = mk.get("match_type")
                if kind == "valid":
                    params.append(MatchParam(MatchKind.VALID, 1 if mk.get("key") else 0))
                elif kind == "exact":
                    params.append(MatchParam(MatchKind.EXACT, _hex(mk["key"])))
                elif kind == "lpm":
                    params.append(MatchParam(MatchKind.LPM, _hex(mk["key"]),
                                             prefix_len=mk["prefix_length"]))
                elif kind == "ternary":
                    params.append(MatchParam(MatchKind.TERNARY, _hex(mk["key"]),
                                             mask=_hex(mk["mask"])))
                elif kind == "range":
                    params.append(MatchParam(MatchKind.RANGE, _hex(mk["start"]),
                                             high=_hex(mk["end"])))
                else:
                    raise ProgramError(f"{ew}: unknown match_type {kind!r}")
            ae = ent.get("action_entry", {})
            aid = ae.get("action_id")
            if aid not in self.actions:
                raise ProgramError(f"{ew}: unknown action id {aid}")
            call = ActionCall(self.actions[aid]["name"],
                              tuple(_hex(x) for x in ae.get("action_data", [])))
            try:
                # bmv2: a lower value is a higher priority; ours: larger wins.
                table.add(params, call, -int(ent.get("priority", 0)), const=True)
            except Exception as e:
                raise ProgramError(f"{ew}: {e}") from None
        if t.get("entries"):
            table.const_entries = True
        return table

    # ------------------------------------------------------------- use scan
    def _scan_uses(self) -> None:
        """Which fields are read, and which headers are used whole, anywhere.

        Headers used whole (copied, hashed, stacks) are decoded completely at
        extract time; of the others only the fields some code reads are decoded,
        and the rest only when the program first writes to the header (the
        deparser must then re-pack it): see `_materialize`.
        """
        self.read_fields: set[tuple[str, str]] = set()
        self.full_headers: set[str] = set()

        def walk(node):
            if isinstance(node, dict):
                if node.get("op") in ("add_header", "remove_header"):
                    return  # validity only
                if node.get("op") == "valid":
                    return
                params = node.get("parameters")
                if node.get("op") in ("assign", "modify_field", "set") and \
                        isinstance(params, list) and params and \
                        isinstance(params[0], dict) and params[0].get("type") == "field":
                    # The destination field is written, not read: a field only ever
                    # written need not be decoded by the parser (see _materialize).
                    walk(params[1:])
                    return
                t = node.get("type")
                v = node.get("value")
                if t == "field" and isinstance(v, list) and len(v) == 2:
                    self.read_fields.add((v[0], v[1]))
                elif t == "stack_field" and isinstance(v, list):
                    for hd in self.stacks.get(v[0], []):
                        self.read_fields.add((hd.name, v[1]))
                elif t == "header" and isinstance(v, str):
                    self.full_headers.add(v)
                elif t == "header_stack" and isinstance(v, str):
                    self.full_headers.update(h.name for h in self.stacks.get(v, []))
                for x in node.values():
                    walk(x)
            elif isinstance(node, list):
                for x in node:
                    walk(x)

        walk(self.json.get("parsers"))
        walk(self.json.get("pipelines"))
        walk(self.json.get("actions"))
        walk(self.json.get("calculations"))
        walk(self.json.get("checksums"))
        walk(self.json.get("learn_lists"))
        walk(self.json.get("field_lists"))
        for p in self._list("pipelines"):
            for t in p.get("tables", []):
                for k in t.get("key", []):
                    if isinstance(k.get("target"), list):
                        self.read_fields.add(tuple(k["target"]))
        writers = {"assign", "modify_field", "assign_VL", "register_read",
                   "modify_field_with_hash_based_offset", "modify_field_rng_uniform"}

        def dst_header(param):
            if param.get("type") == "expression":
                walk_deref(param)

        def walk_deref(node):
            if isinstance(node, dict):
                if node.get("op") == "dereference_header_stack":
                    left = node.get("left", {})
                    self.full_headers.update(h.name for h in self.stacks.get(left.get("value"), []))
                for x in node.values():
                    walk_deref(x)
            elif isinstance(node, list):
                for x in node:
                    walk_deref(x)

        def prims(plist):
            for p in plist:
                params = p.get("parameters", [])
                op = p.get("op")
                if op in writers and params:
                    dst_header(params[0])
                elif op == "execute_meter" and len(params) == 3:
                    dst_header(params[2])
                walk_deref(params)

        for a in self._list("actions"):
            prims(a.get("primitives", []))
        for parser in self._list("parsers"):
            for st in parser.get("parse_states", []):
                for op in st.get("parser_ops", []):
                    if op.get("op") == "set" and op.get("parameters"):
                        dst_header(op["parameters"][0])
                    elif op.get("op") == "primitive":
                        prims(op.get("parameters", []))
        for c in self._list("checksums"):
            if isinstance(c.get("target"), list):
                self.full_headers.add(c["target"][0])
        for m in self._list("meter_arrays"):
            if isinstance(m.get("result_target"), list):
                self.full_headers.add(m["result_target"][0])
        for hd in self.headers.values():
            if hd.var_field:
                self.full_headers.add(hd.name)

    # ------------------------------------------------------------ generation
    def _name(self, prefix: str, obj) -> str:
        self._uid += 1
        n = f"_{prefix}{self._uid}"
        self.ns[n] = obj
        return n

    def _tmp(self) -> str:
        self._uid += 1
        return f"t{self._uid}"

    def _generate(self) -> str:
        ns = self.ns
        ns.update({
            "_PipelineAbort": PipelineAbort, "_random": random, "_now_us": self.clock_us,
            "_trace": self.trace or (lambda msg: None), "_sx": _sign_extend,
            "_tcm": _two_comp_mod, "_sat": _sat_cast, "_usat": _usat_cast,
            "_hdr_eq": header_ops.header_eq,
            "_pack_bits": externs.pack_bits, "_HASH": externs.HASH_ALGORITHMS,
            "_stack_push": self._stack_push, "_stack_pop": self._stack_pop,
            "_log_msg": self._log_msg,
        })
        out = []
        self._calc_names: dict[str, str] = {}
        for name, (i, c) in self.calculations.items():
            out += self._gen_calculation(name, c, f"calculations[{i}]")
        out += self._gen_parser()
        for pname in ("ingress", "egress"):
            pi, p = self.pipelines[pname]
            out += self._gen_pipeline(pname, p, f"pipelines[{pi}]")
        out += self._gen_deparser()
        out += self._extra_source
        return "\n".join(out) + "\n"

    # -- references and expressions ------------------------------------------
    def _hdr(self, name, where: str) -> Header:
        hd = self.headers.get(name)
        if hd is None:
            raise ProgramError(f"{where}: unknown header {name!r}")
        return hd

    def _field(self, ref, where: str) -> tuple[int, int, bool, Header, str]:
        """(slot, width, signed, header, field name)."""
        slot = self._field_slot(ref, where)
        hd = self.headers[ref[0]]
        if ref[1] == "$valid$":
            return slot, 1, False, hd, ref[1]
        for fname, w, signed in hd.fields:
            if fname == ref[1]:
                return slot, (w if w != "*" else 0), signed, hd, fname
        raise ProgramError(f"{where}: header {ref[0]!r} has no field {ref[1]!r}")

    def _stack_descs(self, stack: str, where: str) -> str:
        """Name of a tuple of member descriptors (valid, raw, field slots, field widths)."""
        members = self.stacks.get(stack)
        if members is None:
            raise ProgramError(f"{where}: unknown header stack {stack!r}")
        # A Python name for the stack: JSON names may hold dots ("hdr_0.h2") or brackets.
        key = self._stack_keys.get(stack)
        if key is None:
            key = f"_STK{len(self._stack_keys)}_{re.sub(r'[^0-9A-Za-z_]', '_', stack)}"
            self._stack_keys[stack] = key
            self.ns[key] = tuple(self._desc(h) for h in members)
        return key

    def _desc(self, hd: Header) -> tuple:
        return (hd.valid, hd.raw, tuple(hd.slots[f] for f, _w, _s in hd.fields),
                tuple(w if w != "*" else 0 for _f, w, _s in hd.fields), hd.dirty)

    def _width_of(self, code: str) -> int | None:
        """Known bit width of a generated non-negative int expression, or None."""
        if code.isdigit():
            return int(code).bit_length()
        return self._wid.get(code)

    def _known(self, code: str, width: int | None) -> str:
        if width is not None:
            self._wid[code] = width
        return code

    def expr(self, node, where: str, pre: list[str]) -> str:
        """Python expression for a bmv2 type-value object (an rvalue)."""
        if not isinstance(node, dict):
            raise ProgramError(f"{where}: expected a type-value object, found {node!r}")
        t, v = node.get("type"), node.get("value")
        if t == "field":
            slot, w, signed, _hd, _f = self._field(v, where)
            return self._known(f"S[{slot}]", None if signed or not w else w)
        if t == "hexstr":
            try:
                return str(_hex(v))
            except ValueError:
                raise ProgramError(f"{where}: bad hexstr {v!r}") from None
        if t == "bool":
            return "True" if v else "False"
        if t in ("runtime_data", "local"):
            if not isinstance(v, int):
                raise ProgramError(f"{where}: bad {t} index {v!r}")
            if self._const_args is not None:
                if v >= len(self._const_args):
                    raise ProgramError(f"{where}: action data index {v} out of range")
                return str(self._const_args[v])
            w = self._ad_widths[v] if v < len(self._ad_widths) else None
            return self._known(f"ad[{v}]", w)
        if t == "header":
            return f"S[{self._hdr(v, where).valid}]"
        if t == "stack_field":
            stk = self._stack_descs(v[0], where)
            idx = [f for f, _w, _s in self.stacks[v[0]][0].fields].index(v[1])
            return f"S[{stk}[S[{self.stack_next[v[0]]}] - 1][2][{idx}]]"
        if t == "lookahead":
            return self._lookahead(v)
        if t == "register":
            reg = self.registers.get(v[0])
            if reg is None:
                raise ProgramError(f"{where}: unknown register {v[0]!r}")
            cells = self._name("R", reg.cells)
            return self._known(f"{cells}[{self.expr(v[1], where, pre)}]", reg.width)
        if t == "expression":
            return self._op(v, where, pre)
        if t == "string":
            return repr(v)
        raise ProgramError(f"{where}: unsupported operand type {t!r}")

    def _op(self, e, where: str, pre: list[str]) -> str:
        if not isinstance(e, dict) or "op" not in e:
            # p4c wraps expressions twice: {"type":"expression","value":{"type":...}}
            if isinstance(e, dict) and "type" in e:
                return self.expr(e, where, pre)
            raise ProgramError(f"{where}: bad expression {e!r}")
        op = e["op"]
        left, right = e.get("left"), e.get("right")

        def r():
            return self.expr(right, where, pre)

        def l():  # noqa: E743
            return self.expr(left, where, pre)

        if op in ("==", "!=") and (self._is_header_node(left) or self._is_header_node(right)):
            code = self._header_eq(left, right, where, pre)
            return code if op == "==" else f"(not {code})"
        binary = {"+": "+", "-": "-", "*": "*", "<<": "<<", ">>": ">>", "==": "==",
                  "!=": "!=", ">": ">", ">=": ">=", "<": "<", "<=": "<=", "&": "&",
                  "|": "|", "^": "^", "and": "and", "or": "or", "/": "//", "%": "%"}
        if op in binary:
            lc, rc = l(), r()
            wl, wr = self._width_of(lc), self._width_of(rc)
            if op == "&":
                # p4c wraps arithmetic in `& mask`; drop it where the value fits.
                if rc.isdigit() and wl is not None and int(rc) >= (1 << wl) - 1:
                    return lc
                if lc.isdigit() and wr is not None and int(lc) >= (1 << wr) - 1:
                    return rc
                known = [w for w in (wl, wr) if w is not None]
                return self._known(f"({lc} & {rc})", min(known) if known else None)
            code = f"({lc} {binary[op]} {rc})"
            if lc.isdigit() and rc.isdigit() and op in ("+", "*", "<<", ">>", "|", "^"):
                return str(eval(code))  # constant folding of two literals
            if wl is not None and wr is not None:
                if op == "+":
                    return self._known(code, max(wl, wr) + 1)
                if op == "*":
                    return self._known(code, wl + wr)
                if op in ("|", "^"):
                    return self._known(code, max(wl, wr))
                if op == "<<" and rc.isdigit():
                    return self._known(code, wl + int(rc))
                if op == ">>":
                    return self._known(code, wl)
            return code
        if op == "not":
            return f"(not {r()})"
        if op == "~":
            return f"(~{r()})"
        if op == "d2b":
            return f"({r()} != 0)"
        if op == "b2d":
            c = r()
            if c in ("True", "False"):
                return "1" if c == "True" else "0"
            return self._known(f"(1 if {c} else 0)", 1)
        if op == "valid":
            return f"(S[{self._header_valid(right, where, pre)}] == 1)"
        if op == "valid_union":
            members = self.unions.get(right.get("value"))
            if members is None:
                raise ProgramError(f"{where}: unknown header union {right.get('value')!r}")
            return "(" + " or ".join(f"S[{h.valid}] == 1" for h in members) + ")"
        if op == "two_comp_mod":
            return f"_tcm({l()}, {r()})"
        if op == "sat_cast":
            return f"_sat({l()}, {r()})"
        if op == "usat_cast":
            return f"_usat({l()}, {r()})"
        if op == "?":
            lc, rc = l(), r()
            wl, wr = self._width_of(lc), self._width_of(rc)
            code = f"({lc} if {self.expr(e.get('cond'), where, pre)} else {rc})"
            return self._known(code, max(wl, wr) if wl is not None and wr is not None else None)
        if op == "last_stack_index":
            return f"(S[{self.stack_next[self._stack_name(right, where)]}] - 1)"
        if op == "size_stack":
            return f"S[{self.stack_next[self._stack_name(right, where)]}]"
        if op == "access_field":
            desc = self._dyn_header(left, where, pre)
            return f"S[{desc}[2][{right}]]"
        if op == "dereference_header_stack":
            desc = self._dyn_header({"type": "expression", "value": e}, where, pre)
            return f"S[{desc}[0]]"
        raise ProgramError(f"{where}: unsupported expression op {op!r}")

    @staticmethod
    def _is_header_node(node) -> bool:
        if not isinstance(node, dict):
            return False
        if node.get("type") == "header":
            return True
        e = node.get("value")
        return node.get("type") == "expression" and isinstance(e, dict) and \
            e.get("op") == "dereference_header_stack"

    def _header_eq(self, left, right, where: str, pre: list[str]) -> str:
        """bmv2's `==` on two headers (Header::cmp): same header type, both valid and
        every field equal. (Two invalid headers are NOT equal here: P4's header
        equality is what the compiler builds from this and the valid bits.)"""
        if not (self._is_header_node(left) and self._is_header_node(right)):
            raise ProgramError(f"{where}: a header compared with something that is not one")
        types = [self._header_type(n, where) for n in (left, right)]
        if types[0] != types[1]:
            return "False"
        a = self._dyn_header(left, where, pre)
        b = self._dyn_header(right, where, pre)
        return f"_hdr_eq(S, {a}, {b})"

    def _header_type(self, node, where: str) -> str:
        if node.get("type") == "header":
            return self._hdr(node["value"], where).type_name
        stack = self._stack_name(node["value"]["left"], where)
        return self.stacks[stack][0].type_name if self.stacks[stack] else ""

    def _stack_name(self, node, where: str) -> str:
        name = node.get("value") if isinstance(node, dict) else None
        if name not in self.stacks:
            raise ProgramError(f"{where}: unknown header stack {name!r}")
        return name

    def _dyn_header(self, node, where: str, pre: list[str]) -> str:
        """Code for a runtime header descriptor (valid, raw, slots, widths)."""
        if node.get("type") == "header":
            hd = self._hdr(node["value"], where)
            return self._name("HD", self._desc(hd))
        e = node.get("value")
        if node.get("type") == "expression" and isinstance(e, dict) and "op" not in e:
            return self._dyn_header(e, where, pre)
        if node.get("type") == "expression" and e.get("op") == "dereference_header_stack":
            stk = self._stack_descs(self._stack_name(e["left"], where), where)
            t = self._tmp()
            pre.append(f"{t} = {stk}[{self.expr(e['right'], where, pre)}]")
            return t
        raise ProgramError(f"{where}: expected a header, found {node!r}")

    def _header_valid(self, node, where: str, pre: list[str]) -> str:
        if isinstance(node, dict) and node.get("type") == "header":
            return str(self._hdr(node["value"], where).valid)
        return f"{self._dyn_header(node, where, pre)}[0]"

    def _lookahead(self, v) -> str:
        bit_off, width = v
        first = bit_off // 8
        last = (bit_off + width + 7) // 8
        shift = last * 8 - bit_off - width
        return (f"(int.from_bytes(pkt[off+{first}:off+{last}].ljust({last - first}, b'\\0'), "
                f"'big') >> {shift} & {(1 << width) - 1})")

    def _store(self, ref_node, value: str, where: str, pre: list[str]) -> list[str]:
        """Statements storing `value` into an lvalue, truncated to its width."""
        t = ref_node.get("type")
        if t == "field":
            slot, w, signed, hd, f = self._field(ref_node["value"], where)
            if f == "$valid$":
                raise ProgramError(f"{where}: {hd.name}.$valid$ is read-only")
            vw = self._width_of(value)
            if signed:
                val = f"_sx({value}, {w})"
            elif vw is not None and vw <= w:
                val = value
            else:
                val = f"({value}) & {(1 << w) - 1}"
            if hd.var_field == f:
                val = f"({value})"
            if hd.metadata:
                return [f"S[{slot}] = {val}"]
            # A header field: the header is dirty (the deparser re-packs it) only
            # if the value changes; rewriting a field with its own value, which
            # forwarding programs often do, leaves the frame as it is.
            lines = []
            if hd.name not in self.full_headers and self._undecoded(hd):
                lines = [f"if not S[{hd.dirty}]:", f"    {self._materialize(hd)}(S)"]
            if hd.var_field == f:  # its width may change too (assign_VL)
                return lines + [f"S[{slot}] = {val}", f"S[{hd.dirty}] = 1"]
            tmp = self._tmp()
            return lines + [f"{tmp} = {val}", f"if S[{slot}] != {tmp}:",
                            f"    S[{slot}] = {tmp}", f"    S[{hd.dirty}] = 1"]
        if t == "expression":
            e = ref_node["value"]
            if isinstance(e, dict) and "op" not in e:
                return self._store(e, value, where, pre)
            if e.get("op") == "access_field":
                desc = self._dyn_header(e["left"], where, pre)
                i = e["right"]
                return [f"S[{desc}[2][{i}]] = ({value}) & ((1 << {desc}[3][{i}]) - 1)",
                        f"S[{desc}[1]] = -1"]
        if t == "stack_field":
            stk = self._stack_descs(ref_node["value"][0], where)
            members = self.stacks[ref_node["value"][0]]
            idx = [f for f, _w, _s in members[0].fields].index(ref_node["value"][1])
            d = self._tmp()
            return [f"{d} = {stk}[S[{self.stack_next[ref_node['value'][0]]}] - 1]",
                    f"S[{d}[2][{idx}]] = ({value}) & ((1 << {d}[3][{idx}]) - 1)",
                    f"S[{d}[1]] = -1"]
        raise ProgramError(f"{where}: cannot assign to {ref_node!r}")

    def _undecoded(self, hd: Header) -> bool:
        """True if the parser leaves some field of `hd` undecoded."""
        return any(w != "*" and (hd.name, f) not in self.read_fields for f, w, _s in hd.fields)

    def _materialize(self, hd: Header) -> str:
        """Name of a function decoding the fields of `hd` the parser skipped."""
        name = f"_mat_{hd.index}"
        if name not in self.ns:
            lines = [f"def {name}(S):", "    pkt = S[0]", f"    off = S[{hd.raw}]",
                     "    if off < 0:", "        return"]
            bit = 0
            for f, w, signed in hd.fields:
                if (hd.name, f) not in self.read_fields:
                    o = f"off+{bit // 8}" if bit // 8 else "off"
                    val = self._read_bits("pkt", o, bit % 8, w)
                    if signed:
                        val = f"_sx({val}, {w})"
                    lines.append(f"    S[{hd.slots[f]}] = {val}")
                bit += w
            self._extra_source.append("\n".join(lines))
            self.ns[name] = None  # defined when the generated source runs
        return name

    # -- calculations ----------------------------------------------------------
    def _gen_calculation(self, name: str, c: dict, where: str) -> list[str]:
        fn = f"_calc{len(self._calc_names)}"
        self._calc_names[name] = fn
        algo = self._name("ALG", externs.HASH_ALGORITHMS[c["algo"]])
        lines = [f"def {fn}(S):", "    parts = []"]
        payload = False
        for ii, inp in enumerate(c.get("input", [])):
            iw = f"{where}.input[{ii}]"
            t = inp.get("type")
            if t == "field":
                slot, w, _s, _hd, _f = self._field(inp["value"], iw)
                lines.append(f"    parts.append((S[{slot}], {w}))")
            elif t == "hexstr":
                lines.append(f"    parts.append(({_hex(inp['value'])}, {int(inp['bitwidth'])}))")
            elif t == "header":
                hd = self._hdr(inp["value"], iw)
                lines.append(f"    if S[{hd.valid}]:")
                for f, w, _s in hd.fields:
                    lines.append(f"        parts.append((S[{hd.slots[f]}], {w}))")
            elif t == "payload":
                payload = True
            else:
                raise ProgramError(f"{iw}: unsupported calculation input type {t!r}")
        lines.append("    data = _pack_bits(parts)")
        if payload:
            lines.append("    data += S[0][S[1]:]")
        lines.append(f"    return {algo}(data)")
        return lines

    # -- parser -------------------------------------------------------------------
    def _gen_parser(self) -> list[str]:
        parser = self._list("parsers")[0]
        where0 = "parsers[0]"
        states = {}
        for si, st in enumerate(parser.get("parse_states", [])):
            if "name" not in st:
                raise ProgramError(f"{where0}.parse_states[{si}]: missing name")
            states[st["name"]] = (si, st)
        init = parser.get("init_state")
        if init not in states:
            raise ProgramError(f"{where0}: init_state {init!r} is not a parse state")
        err = self.errors
        end = ["S[1] = off", "return"]

        def fail(code_name: str) -> list[str]:
            return [f"S[{self.std['parser_error']}] = {err.get(code_name, 0)}", *end]

        def succs(name):
            si, st = states[name]
            out = []
            for tr in st.get("transitions", []):
                nxt = tr.get("next_state")
                if nxt is not None and nxt not in states:
                    raise ProgramError(f"{where0}.parse_states[{si}] ({name}): unknown "
                                       f"next_state {nxt!r}")
                if nxt not in out:
                    out.append(nxt)
            return out

        def body(name, goto):
            si, st = states[name]
            where = f"{where0}.parse_states[{si}] ({name})"
            lines = []
            if self.trace:
                lines.append(f"_trace(\"Parser 'parser' entering state '{name}'\")")
            for oi, op in enumerate(st.get("parser_ops", [])):
                lines += self._parser_op(op, f"{where}.parser_ops[{oi}]", fail)
            lines += self._transition(st, where, goto, fail)
            return lines

        lines = ["def parse(S, pkt):", "    off = 0", "    plen = len(pkt)"]
        lines += _indent(self._emit_graph(init, succs, body, end, "parser"))
        verify = self._gen_checksums(verify=True)
        if verify:
            # Checksums are verified after a successful parse, as in bmv2.
            lines = [ln.replace("def parse(", "def _parse_states(") for ln in lines[:1]] + lines[1:]
            lines += ["def parse(S, pkt):", "    _parse_states(S, pkt)",
                      f"    if S[{self.std['parser_error']}] == 0:"]
            lines += _indent(verify, 2)
        return lines

    def _parser_op(self, op, where, fail) -> list[str]:
        kind = op.get("op")
        params = op.get("parameters", [])
        if kind in ("extract", "extract_VL"):
            if not params:
                raise ProgramError(f"{where}: extract needs a parameter")
            p = params[0]
            vl = None
            if kind == "extract_VL":
                pre = []
                vl = self.expr(params[1], where, pre)
                if pre:
                    raise ProgramError(f"{where}: unsupported extract_VL length expression")
            if p.get("type") == "regular":
                return self._extract(self._hdr(p.get("value"), where), vl, fail)
            if p.get("type") == "stack":
                name = p.get("value")
                if name not in self.stacks:
                    raise ProgramError(f"{where}: unknown header stack {name!r}")
                nx = self.stack_next[name]
                lines = []
                for i, hd in enumerate(self.stacks[name]):
                    lines.append(f"{'if' if i == 0 else 'elif'} S[{nx}] == {i}:")
                    lines += _indent(self._extract(hd, vl, fail))
                lines.append("else:")
                lines += _indent(fail("StackOutOfBounds"))
                lines.append(f"S[{nx}] += 1")
                return lines
            raise ProgramError(f"{where}: unsupported extract target type {p.get('type')!r}")
        if kind == "set":
            if len(params) != 2:
                raise ProgramError(f"{where}: set takes 2 parameters")
            pre = []
            val = self.expr(params[1], where, pre)
            return pre + self._store(params[0], val, where, pre)
        if kind == "verify":
            if len(params) != 2:
                raise ProgramError(f"{where}: verify takes 2 parameters")
            pre = []
            cond = self.expr(params[0], where, pre)
            code = self.expr(params[1], where, pre)
            return pre + [f"if not {cond}:",
                          f"    S[{self.std['parser_error']}] = {code}", "    S[1] = off",
                          "    return"]
        if kind in ("advance", "shift"):
            pre = []
            n = self.expr(params[0], where, pre)
            nbytes = f"({n}) // 8" if kind == "advance" else f"({n})"
            t = self._tmp()
            return pre + [f"{t} = {nbytes}", f"if off + {t} > plen:",
                          *_indent(fail("PacketTooShort")), f"off += {t}"]
        if kind == "primitive":
            lines = []
            for pi, prim in enumerate(params):
                lines += self._primitive(prim, f"{where}.parameters[{pi}]", in_parser=True)
            return lines
        raise ProgramError(f"{where}: unknown parser op {kind!r}")

    def _invalidate_siblings(self, hd: Header) -> list[str]:
        """A header union member just became valid: the other members become invalid."""
        return [f"S[{x.valid}] = 0" for x in self.union_siblings.get(hd.name, ())]

    def _extract(self, hd: Header, vl: str | None, fail) -> list[str]:
        if hd.metadata:
            raise ProgramError(f"cannot extract metadata instance {hd.name!r}")
        n = hd.fixed_bytes
        lines = []
        if hd.var_field is not None:
            if vl is None:
                raise ProgramError(f"header {hd.name!r} has a varbit field: needs extract_VL")
            lines += [f"vlw = {vl}"]
            if hd.max_bytes is not None:  # bmv2: longer than the header type's max_length
                lines += [f"if {n} + vlw // 8 > {hd.max_bytes}:",
                          *_indent(fail("HeaderTooShort"))]
            lines += [f"if off + {n} + vlw // 8 > plen:", *_indent(fail("PacketTooShort"))]
        else:
            lines += [f"if off + {n} > plen:", *_indent(fail("PacketTooShort"))]
        lines += [f"S[{hd.valid}] = 1", f"S[{hd.raw}] = off", f"S[{hd.dirty}] = 0"]
        lines += self._invalidate_siblings(hd)
        if self.trace:
            lines.append(f"_trace(\"Extracting header '{hd.name}'\")")
        full = hd.name in self.full_headers
        bit = 0
        var_seen = False
        for f, w, signed in hd.fields:
            if w == "*":
                lines += [f"S[{hd.var_width}] = vlw",
                          f"S[{hd.slots[f]}] = int.from_bytes(pkt[off+{bit // 8}:"
                          f"off+{bit // 8}+vlw//8], 'big')"]
                var_seen = True
                continue
            if full or (hd.name, f) in self.read_fields:
                if var_seen:
                    # Fields after a varbit field: offsets depend on vlw.
                    o = f"off+vlw//8+{bit // 8}"
                else:
                    o = f"off+{bit // 8}" if bit // 8 else "off"
                val = self._read_bits("pkt", o, bit % 8, w)
                if signed:
                    val = f"_sx({val}, {w})"
                lines.append(f"S[{hd.slots[f]}] = {val}")
            bit += w
        lines.append(f"off += {n}" + (" + vlw // 8" if hd.var_field else ""))
        return lines

    @staticmethod
    def _read_bits(p: str, o: str, bit_in_byte: int, w: int) -> str:
        if bit_in_byte == 0 and w in BYTE_ALIGNED_READERS:
            return BYTE_ALIGNED_READERS[w].format(p=p, o=o)
        nbytes = (bit_in_byte + w + 7) // 8
        shift = nbytes * 8 - bit_in_byte - w
        mask = (1 << w) - 1
        if nbytes == 1:
            base = f"{p}[{o}]"
        else:
            base = f"int.from_bytes({p}[{o}:{o}+{nbytes}], 'big')"
        if shift:
            base = f"({base} >> {shift})"
        if bit_in_byte:
            base = f"({base} & {mask})"
        return base

    def _transition(self, st, where, goto, fail) -> list[str]:
        trans = st.get("transitions", [])
        keys = st.get("transition_key", [])
        if not keys:
            # Only a default transition can apply.
            for tr in trans:
                if tr.get("type") == "default" or tr.get("value") is None:
                    return goto(tr.get("next_state"))
            return fail("NoMatch")
        pre: list[str] = []
        parts = []
        widths = []
        for ki, k in enumerate(keys):
            kw = f"{where}.transition_key[{ki}]"
            if k.get("type") == "lookahead":
                w = k["value"][1]
            elif k.get("type") == "field":
                w = self._field(k["value"], kw)[1]
            elif k.get("type") == "stack_field":
                members = self.stacks[k["value"][0]]
                w = dict((f, w) for f, w, _s in members[0].fields)[k["value"][1]]
            else:
                raise ProgramError(f"{kw}: unsupported transition key type {k.get('type')!r}")
            parts.append(self.expr(k, kw, pre))
            widths.append((w + 7) // 8 * 8)
        key = parts[0]
        for p, w in zip(parts[1:], widths[1:]):
            key = f"({key} << {w} | {p})"
        lines = pre + [f"k = {key}"]
        first = True
        for ti, tr in enumerate(trans):
            t = tr.get("type")
            if t == "default" or (t is None and tr.get("value") is None):
                cond = None
            elif t == "hexstr":
                v = _hex(tr["value"])
                m = tr.get("mask")
                cond = f"(k & {_hex(m)}) == {v & _hex(m)}" if m is not None else f"k == {v}"
            elif t == "parse_vset":
                vs = self.parse_vsets.get(tr.get("value"))
                if vs is None:
                    raise ProgramError(f"{where}.transitions[{ti}]: unknown parse_vset "
                                       f"{tr.get('value')!r}")
                vsn = self._name("VS", vs)
                m = tr.get("mask")
                cond = f"(k & {_hex(m)}) in {vsn}" if m is not None else f"k in {vsn}"
            else:
                raise ProgramError(f"{where}.transitions[{ti}]: unknown transition type {t!r}")
            if cond is None:
                if first:
                    return lines + goto(tr.get("next_state"))
                lines.append("else:")
                lines += _indent(goto(tr.get("next_state")))
                return lines
            lines.append(f"{'if' if first else 'elif'} {cond}:")
            lines += _indent(goto(tr.get("next_state")))
            first = False
        if first:
            return lines + fail("NoMatch")
        lines.append("else:")
        lines += _indent(fail("NoMatch"))
        return lines

    # -- control flow graphs ------------------------------------------------------
    def _emit_graph(self, init, succs, body, end: list[str], what: str) -> list[str]:
        """Structured code for a graph of nodes: nested where a node has one
        predecessor, and `n == K` blocks (in topological order) for join nodes;
        a `while` dispatch loop if the graph has a cycle (parser loops)."""
        order: list = []
        seen: set = set()
        onstack: set = set()
        cyclic = False
        preds: dict = {}
        stack = [(init, iter(succs(init)))]
        seen.add(init)
        onstack.add(init)
        preds[init] = 0
        while stack:
            node, it = stack[-1]
            for s in it:
                if s is None:
                    continue
                preds[s] = preds.get(s, 0) + 1
                if s in onstack:
                    cyclic = True
                if s not in seen:
                    seen.add(s)
                    onstack.add(s)
                    stack.append((s, iter(succs(s))))
                    break
            else:
                stack.pop()
                onstack.discard(node)
                order.append(node)
        order.reverse()  # topological order when acyclic
        index = {n: i for i, n in enumerate(order)}
        if cyclic:
            def goto(s):
                return list(end) if s is None else [f"n = {index[s]}", "continue"]
            lines = [f"n = {index[init]}", "while True:"]
            for i, node in enumerate(order):
                lines.append(f"    {'if' if i == 0 else 'elif'} n == {i}:")
                lines += _indent(body(node, goto), 2)
            return lines

        # A join node whose code, inlined to the end of the graph, is short is
        # duplicated into each predecessor instead: straight-line code is
        # faster than `n == K` dispatch. Longer tails stay shared.
        own = {n: len(body(n, lambda s: [])) for n in order}
        tail: dict = {}
        for n in reversed(order):
            tail[n] = own[n] + sum(tail[s] for s in succs(n) if s is not None)
        joins = [n for n in order if preds.get(n, 0) > 1 and tail[n] > TAIL_DUPLICATION_LINES]

        def goto(s):
            if s is None:
                return list(end)
            if s in joins:
                return [f"n = {index[s]}"]
            return body(s, goto)

        lines = goto(init)
        for j in joins:
            lines.append(f"if n == {index[j]}:")
            lines += _indent(body(j, goto))
        if joins:
            lines = ["n = -1"] + lines
        lines += list(end)
        return lines

    def _gen_pipeline(self, pname: str, p: dict, where: str) -> list[str]:
        tables = {t["name"]: (i, t) for i, t in enumerate(p.get("tables", []))}
        conds = {c["name"]: (i, c) for i, c in enumerate(p.get("conditionals", []))}
        calls = {c["name"]: (i, c) for i, c in enumerate(p.get("action_calls", []))}

        def check(nxt, w):
            if nxt is not None and nxt not in tables and nxt not in conds and nxt not in calls:
                raise ProgramError(f"{w}: unknown next node {nxt!r}")
            return nxt

        def succs(name):
            if name in tables:
                i, t = tables[name]
                w = f"{where}.tables[{i}] ({name})"
                nt = t.get("next_tables", {})
                base = t.get("base_default_next")
                if "__HIT__" in nt or "__MISS__" in nt:
                    targets = [nt.get("__HIT__", base), nt.get("__MISS__", base)]
                else:
                    targets = [nt.get(n, base) for n in t.get("actions", [])] or [base]
                    if len(set(targets)) > 1:
                        targets.append(base)  # no action ran (dangling member)
                out = []
                for v in targets:
                    check(v, w)
                    if v not in out:
                        out.append(v)
                return out
            if name in conds:
                i, c = conds[name]
                w = f"{where}.conditionals[{i}] ({name})"
                out = [check(c.get("true_next"), w)]
                if c.get("false_next") != c.get("true_next"):
                    out.append(check(c.get("false_next"), w))
                return out
            i, c = calls[name]
            return [check(c.get("next_node"), f"{where}.action_calls[{i}] ({name})")]

        def body(name, goto):
            if name in tables:
                i, t = tables[name]
                return self._gen_table(t, f"{where}.tables[{i}] ({name})", goto)
            if name in conds:
                i, c = conds[name]
                w = f"{where}.conditionals[{i}] ({name})"
                pre = []
                e = self.expr(c.get("expression"), w, pre)
                if c.get("true_next") == c.get("false_next"):
                    return pre + goto(c.get("true_next"))
                lines = pre + [f"if {e}:"]
                frag = (c.get("source_info") or {}).get("source_fragment")
                cname = f"{json.dumps(frag)} ({name})" if frag else f"'{name}'"
                cname = cname.replace("\\", "\\\\").replace('"', '\\"')
                if self.trace:
                    lines.append(f"    _trace(\"Condition {cname} is true\")")
                lines += _indent(goto(c.get("true_next")) or ["pass"])
                lines.append("else:")
                if self.trace:
                    lines.append(f"    _trace(\"Condition {cname} is false\")")
                lines += _indent(goto(c.get("false_next")) or ["pass"])
                return lines
            i, c = calls[name]
            w = f"{where}.action_calls[{i}] ({name})"
            aid = c.get("action_id")
            if aid not in self.actions:
                raise ProgramError(f"{w}: unknown action id {aid}")
            return ["ad = ()"] + self._action_body(aid, w) + goto(c.get("next_node"))

        init = p.get("init_table")
        lines = [f"def {pname}(S):"]
        if init is None:
            return lines + ["    return"]
        check(init, f"{where}.init_table")
        lines += _indent(self._emit_graph(init, succs, body, ["return"], pname))
        return lines

    def _gen_table(self, t: dict, where: str, goto) -> list[str]:
        name = t["name"]
        table = self.tables[name]
        de = t.get("default_entry") or {}
        if not t.get("key") and de.get("action_const") and table.profile is None \
                and table.default.action in self.actions:
            # A keyless table whose default action the control plane cannot change
            # (p4c's way of calling an action from a control): the action, inline.
            aid = table.default.action
            lines = []
            if self.trace:
                lines.append(f"_trace(\"Applying table '{name}'\")")
                lines.append(f"_trace(\"Table '{name}': miss\")")
            self._const_args = tuple(table.default.args)
            try:
                lines += self._action_body(aid, f"{where} action {self.actions[aid]['name']}")
            finally:
                self._const_args = None
            nt = t.get("next_tables", {})
            base = t.get("base_default_next")
            if "__HIT__" in nt or "__MISS__" in nt:
                nxt = nt.get("__MISS__", base)
            else:
                an = next((n for n, i in zip(t.get("actions", []), t.get("action_ids") or [])
                           if i == aid), self.actions[aid]["name"])
                nxt = nt.get(an, base)
            return lines + goto(nxt)
        tn = self._name("T", table)
        lines: list[str] = []
        if self.trace:
            lines.append(f"_trace(\"Applying table '{name}'\")")
        pre: list[str] = []
        kexprs = []
        for ki, k in enumerate(t.get("key", [])):
            kw = f"{where}.key[{ki}]"
            if k["match_type"] == "valid":
                target = k["target"] if isinstance(k["target"], str) else k["target"][0]
                e = f"S[{self.headers[target].valid}]"
            else:
                e = self.expr({"type": "field", "value": k["target"]}, kw, pre)
            if k.get("mask") is not None:
                e = f"({e} & {_hex(k['mask'])})"
            kexprs.append(e)
        lines += pre
        if not kexprs:
            lines += [f"e = {tn}.default", "hit = False"]
        else:
            key = kexprs[0] if len(kexprs) == 1 else "(" + ", ".join(kexprs) + ",)"
            if table.mode == "exact":
                d = self._name("TD", table.exact)
                lines.append(f"e = {d}.get({key})")
            elif table.mode == "lpm":
                lines.append(f"e = {tn}.lookup_lpm({key})")
            else:
                lines.append(f"e = {tn}.lookup_ternary({key})")
            lines += ["if e is None:", f"    e = {tn}.default", "    hit = False",
                      "else:", "    hit = True"]
            if table.with_counters:
                lines += ["    e.npkts += 1", f"    e.nbytes += S[{self.std['packet_length']}]"]
            dm = self.direct_meters.get(name)
            if dm is not None:
                slot, w, _s, hd, _f = self._field(dm["result_target"], where + ".direct_meter")
                amount = f"S[{self.std['packet_length']}]" if dm.get("type") == "bytes" else "1"
                lines += ["    if e.meter is not None:",
                          f"        S[{slot}] = e.meter.execute({amount}, _now_us())",
                          "    else:", f"        S[{slot}] = 0"]
                if not hd.metadata:
                    lines.append(f"    S[{hd.dirty}] = 1")
        if table.profile is not None:
            ap = self._name("AP", table.profile)
            hexpr = "0"
            selector = self._profile_selector(t.get("action_profile"))
            if selector is not None:
                hexpr = selector
            lines += ["if hit:", f"    a, ad = {ap}.resolve(e, {hexpr})", "else:",
                      "    a = e.action", "    ad = e.args"]
        else:
            lines += ["a = e.action", "ad = e.args"]
        if self.trace:
            lines.append(f"_trace(\"Table '{name}': \" + ('hit with handle ' + str(e.handle) "
                         f"if hit else 'miss'))")
        nt = t.get("next_tables", {})
        hit_miss = "__HIT__" in nt or "__MISS__" in nt
        base = t.get("base_default_next")
        targets = {} if hit_miss else {n: nt.get(n, base) for n in t.get("actions", [])}
        # A table with no default entry runs no action on a miss and goes on with
        # base_default_next (bmv2), which may not be where its only action leads.
        outcomes = set(targets.values()) | ({base} if table.initial_default.action not in
                                            self.actions else set())
        same_next = len(outcomes) <= 1
        names = t.get("actions", [])
        ids = t.get("action_ids") or [self.action_names[n] for n in names]
        first = True
        for an, aid in zip(names, ids):
            body = self._action_body(aid, f"{where} action {an}")
            if self.trace:
                body = [f"_trace(\"Action entry is {an} - \" + "
                        "''.join(f'{x:x},' for x in ad))"] + body
            if not hit_miss and not same_next:
                body = body + goto(targets[an])
            if not body:
                body = ["pass"]
            lines.append(f"{'if' if first else 'elif'} a == {aid}:")
            lines += _indent(body)
            first = False
        if not hit_miss and not same_next:
            rest = goto(base)
            if rest:
                lines += (["else:"] + _indent(rest)) if not first else rest
        if hit_miss:
            lines.append("if hit:")
            lines += _indent(goto(nt.get("__HIT__", base)) or ["pass"])
            lines.append("else:")
            lines += _indent(goto(nt.get("__MISS__", base)) or ["pass"])
        elif same_next:
            nxt = next(iter(targets.values())) if targets else base
            lines += goto(nxt)
        return lines

    def _profile_selector(self, profile_name: str) -> str | None:
        for _pi, p in self.pipelines.values():
            for ap in p.get("action_profiles", []):
                if ap["name"] == profile_name and ap.get("selector"):
                    sel = ap["selector"]
                    algo = sel.get("algo")
                    if algo not in externs.HASH_ALGORITHMS:
                        raise ProgramError(f"action profile {profile_name}: unsupported "
                                           f"selector algo {algo!r}")
                    parts = []
                    for inp in sel.get("input", []):
                        slot, w, _s, _hd, _f = self._field(inp["value"],
                                                           f"action profile {profile_name}")
                        parts.append(f"(S[{slot}], {w})")
                    fn = self._name("ALG", externs.HASH_ALGORITHMS[algo])
                    return f"{fn}(_pack_bits([{', '.join(parts)}]))"
        return None

    # -- actions ----------------------------------------------------------------------
    def _action_body(self, aid: int, where: str) -> list[str]:
        a = self.actions[aid]
        self._ad_widths = tuple(rd.get("bitwidth") for rd in a.get("runtime_data", []))
        where = f"{where} ({a['name']})"
        prims = a.get("primitives", [])
        if any(p.get("op") in ("_jump", "_jump_if_zero") for p in prims):
            # Branches inside an action: a small program-counter loop.
            lines = ["pc = 0", "while True:"]
            for i, p in enumerate(prims):
                pw = f"{where}.primitives[{i}]"
                lines.append(f"    {'if' if i == 0 else 'elif'} pc == {i}:")
                op = p.get("op")
                params = p.get("parameters", [])
                if op == "_jump":
                    pre = []
                    tgt = self.expr(params[0], pw, pre)
                    lines += _indent(pre + [f"pc = {tgt}"], 2)
                elif op == "_jump_if_zero":
                    pre = []
                    c = self.expr(params[0], pw, pre)
                    tgt = self.expr(params[1], pw, pre)
                    lines += _indent(pre + [f"pc = {tgt} if {c} == 0 else {i + 1}"], 2)
                else:
                    lines += _indent(self._primitive(p, pw) + [f"pc = {i + 1}"], 2)
            lines += ["    else:", "        break"]
            return lines
        lines = []
        for i, p in enumerate(prims):
            lines += self._primitive(p, f"{where}.primitives[{i}]")
        return lines

    def _primitive(self, p: dict, where: str, in_parser: bool = False) -> list[str]:
        op = p.get("op")
        params = p.get("parameters", [])
        pre: list[str] = []
        std = self.std

        def need(n):
            if len(params) != n:
                raise ProgramError(f"{where}: {op} takes {n} parameters, got {len(params)}")

        def ex(i):
            return self.expr(params[i], where, pre)

        if op in ("assign", "modify_field", "assign_VL"):
            need(2)
            src = params[1]
            if src.get("type") in ("header",) and params[0].get("type") == "header":
                return self._primitive({"op": "assign_header", "parameters": params}, where)
            val = ex(1)
            lines = self._store(params[0], val, where, pre)
            if op == "assign_VL":
                dh = self.headers[params[0]["value"][0]]
                sh = self.headers[params[1]["value"][0]]
                lines.append(f"S[{dh.var_width}] = S[{sh.var_width}]")
            return pre + lines
        if op == "assign_header":
            need(2)
            if params[0].get("type") == "header" and params[1].get("type") == "header":
                dh, sh = self._hdr(params[0]["value"], where), self._hdr(params[1]["value"], where)
                lines = [f"S[{dh.slots[f]}] = S[{sh.slots[g]}]"
                         for (f, _w, _s), (g, _v, _t) in zip(dh.fields, sh.fields)]
                return lines + [f"S[{dh.valid}] = S[{sh.valid}]", f"S[{dh.raw}] = S[{sh.raw}]",
                                f"S[{dh.dirty}] = S[{sh.dirty}]"]
            d = self._dyn_header(params[0], where, pre)
            s = self._dyn_header(params[1], where, pre)
            return pre + [f"for _d, _s in zip({d}[2], {s}[2]):", "    S[_d] = S[_s]",
                          f"S[{d}[0]] = S[{s}[0]]", f"S[{d}[1]] = S[{s}[1]]",
                          f"S[{d}[4]] = S[{s}[4]]"]
        if op == "assign_union":
            need(2)
            dm = self.unions[params[0]["value"]]
            sm = self.unions[params[1]["value"]]
            lines = []
            for dh, shd in zip(dm, sm):
                lines += self._primitive({"op": "assign_header", "parameters": [
                    {"type": "header", "value": dh.name},
                    {"type": "header", "value": shd.name}]}, where)
            return lines
        if op == "assign_header_stack":
            need(2)
            dn, sn = self._stack_name(params[0], where), self._stack_name(params[1], where)
            lines = []
            for dh, shd in zip(self.stacks[dn], self.stacks[sn]):
                lines += self._primitive({"op": "assign_header", "parameters": [
                    {"type": "header", "value": dh.name},
                    {"type": "header", "value": shd.name}]}, where)
            return lines + [f"S[{self.stack_next[dn]}] = S[{self.stack_next[sn]}]"]
        if op in ("add_header", "remove_header"):
            need(1)
            if params[0].get("type") == "header":
                hd = self._hdr(params[0]["value"], where)
                if op == "remove_header":
                    return [f"S[{hd.valid}] = 0"]
                return [f"if not S[{hd.valid}]:",
                        *[f"    S[{k}] = 0" for k in hd.slots.values()],
                        f"    S[{hd.valid}] = 1", f"    S[{hd.raw}] = -1",
                        f"    S[{hd.dirty}] = 1",
                        *_indent(self._invalidate_siblings(hd))]
            d = self._dyn_header(params[0], where, pre)
            if op == "remove_header":
                return pre + [f"S[{d}[0]] = 0"]
            # bmv2 zeroes the fields of a header that becomes valid.
            return pre + [f"if not S[{d}[0]]:", f"    for _d in {d}[2]:", "        S[_d] = 0",
                          f"    S[{d}[0]] = 1", f"    S[{d}[1]] = -1"]
        if op in ("push", "pop"):
            need(2)
            sn = self._stack_name(params[0], where)
            stk = self._stack_descs(sn, where)
            fn = "_stack_push" if op == "push" else "_stack_pop"
            return pre + [f"{fn}(S, {stk}, {self.stack_next[sn]}, {ex(1)})"]
        if op in ("mark_to_drop", "drop"):
            return [f"S[{std['egress_spec']}] = {DROP_PORT}", f"S[{std['mcast_grp']}] = 0"]
        if op == "exit":
            if in_parser:
                raise ProgramError(f"{where}: exit in a parser")
            return ["return"]
        if op == "count":
            need(2)
            c = self._counter(params[0], where)
            cb = self._name("CB", c.nbytes)
            cp = self._name("CP", c.npkts)
            idx = ex(1)
            body = [f"{cp}[i] += 1", f"{cb}[i] += S[{std['packet_length']}]"]
            return pre + [f"i = {idx}"] + self._guard_index("i", idx, c.size, body)
        if op == "register_read":
            need(3)
            r = self._register(params[1], where)
            cells = self._name("R", r.cells)
            idx = ex(2)
            if self._index_fits(idx, r.size):
                value = self._known(f"{cells}[{idx}]", r.width)
                return pre + self._store(params[0], value, where, pre)
            i = self._tmp()
            value = self._known(f"({cells}[{i}] if 0 <= {i} < {r.size} else 0)", r.width)
            return pre + [f"{i} = {idx}"] + self._store(params[0], value, where, pre)
        if op == "register_write":
            need(3)
            r = self._register(params[0], where)
            cells = self._name("R", r.cells)
            idx = ex(1)
            v = ex(2)
            vw = self._width_of(v)
            val = v if vw is not None and vw <= r.width else f"({v}) & {(1 << r.width) - 1}"
            return pre + [f"i = {idx}"] + self._guard_index("i", idx, r.size,
                                                            [f"{cells}[i] = {val}"])
        if op == "execute_meter":
            need(3)
            name = params[0].get("value")
            m = self.meters.get(name)
            if m is None:
                raise ProgramError(f"{where}: unknown meter_array {name!r}")
            mn = self._name("M", m.meters)
            amount = f"S[{std['packet_length']}]" if m.count_bytes else "1"
            i = self._tmp()
            lines = [f"{i} = {ex(1)}"]
            return pre + lines + self._store(
                params[2], f"({mn}[{i}].execute({amount}, _now_us()) if 0 <= {i} < {m.size} "
                           f"else 0)", where, pre)
        if op == "modify_field_with_hash_based_offset":
            need(4)
            calc = params[2].get("value")
            if calc not in self._calc_names:
                raise ProgramError(f"{where}: unknown calculation {calc!r}")
            base, size = ex(1), ex(3)
            h = self._tmp()
            return pre + [f"{h} = {self._calc_names[calc]}(S)",
                          f"if {size}:", f"    {h} %= {size}",
                          *self._store(params[0], f"{base} + {h}", where, pre)]
        if op == "modify_field_rng_uniform":
            need(3)
            return pre + self._store(params[0], f"_random.randint({ex(1)}, {ex(2)})", where, pre)
        if op in ("clone_ingress_pkt_to_egress", "clone_egress_pkt_to_egress"):
            if not params:
                raise ProgramError(f"{where}: {op} needs a session id")
            fl = ex(1) if len(params) > 1 else "0"
            return pre + [f"S[{CLONE}] = {ex(0)}", f"S[{CLONE_FL}] = {fl}", f"S[{SPECIAL}] = 1"]
        if op in ("resubmit", "recirculate"):
            fl = ex(0) if params else "0"
            return pre + [f"S[{RESUBMIT if op == 'resubmit' else RECIRC}] = {fl} + 1",
                          f"S[{SPECIAL}] = 1"]
        if op == "generate_digest":
            lid = ex(1) if len(params) > 1 else ex(0)
            return pre + [f"if S[{DIGESTS}] is None:", f"    S[{DIGESTS}] = []",
                          f"S[{DIGESTS}].append({lid})", f"S[{SPECIAL}] = 1"]
        if op == "truncate":
            need(1)
            return pre + [f"S[{TRUNC}] = {ex(0)}"]
        if op == "log_msg":
            if not self.trace:
                return []
            fmt = params[0].get("value", "")
            vec = params[1].get("value", []) if len(params) > 1 else []
            vals = [self.expr(x, where, pre) for x in vec]
            return pre + [f"_log_msg({fmt!r}, [{', '.join(vals)}])"]
        if op in ("assert", "assume"):
            need(1)
            return pre + [f"if not {ex(0)}:",
                          f"    raise _PipelineAbort({(where + ': ' + op + ' failed')!r})"]
        if op in ("_jump", "_jump_if_zero"):
            raise ProgramError(f"{where}: {op} outside an action")
        raise ProgramError(f"{where}: unsupported primitive {op!r}")

    def _index_fits(self, idx: str, size: int) -> bool:
        w = self._width_of(idx)
        return w is not None and (1 << w) <= size

    def _guard_index(self, var: str, idx: str, size: int, body: list[str]) -> list[str]:
        """`body` (using `var`) if the index is in range; bmv2 ignores out-of-range
        extern indices (with an error log), so do we."""
        if self._index_fits(idx, size):
            return body
        return [f"if 0 <= {var} < {size}:", *_indent(body)]

    def _counter(self, param, where) -> externs.CounterArray:
        name = param.get("value")
        c = self.counters.get(name)
        if c is None:
            raise ProgramError(f"{where}: unknown counter_array {name!r}")
        return c

    def _register(self, param, where) -> externs.RegisterArray:
        name = param.get("value")
        r = self.registers.get(name)
        if r is None:
            raise ProgramError(f"{where}: unknown register_array {name!r}")
        return r

    def _log_msg(self, fmt: str, values: list[int]) -> None:
        for v in values:
            fmt = fmt.replace("{}", str(v), 1)
        if self.trace:
            self.trace(fmt)

    @staticmethod
    def _stack_push(S, descs, nx, count) -> None:
        n = len(descs)
        for i in range(n - 1, -1, -1):
            d = descs[i]
            if i >= count:
                s = descs[i - count]
                for a, b in zip(d[2], s[2]):
                    S[a] = S[b]
                S[d[0]], S[d[1]] = S[s[0]], -1
            else:
                S[d[0]] = 0
        S[nx] = min(n, S[nx] + count)

    @staticmethod
    def _stack_pop(S, descs, nx, count) -> None:
        n = len(descs)
        for i in range(n):
            d = descs[i]
            if i + count < n:
                s = descs[i + count]
                for a, b in zip(d[2], s[2]):
                    S[a] = S[b]
                S[d[0]], S[d[1]] = S[s[0]], -1
            else:
                S[d[0]] = 0
        S[nx] = max(0, S[nx] - count)

    # -- checksums and deparser ---------------------------------------------------------
    def _gen_checksums(self, verify: bool) -> list[str]:
        lines = []
        for i, c in enumerate(self._list("checksums")):
            where = f"checksums[{i}] ({c.get('name')})"
            if not c.get("verify" if verify else "update", True):
                continue
            calc = c.get("calculation")
            if calc not in self._calc_names:
                raise ProgramError(f"{where}: unknown calculation {calc!r}")
            pre: list[str] = []
            slot, w, _s, hd, _f = self._field(c.get("target"), where)
            cond = "True"
            if c.get("if_cond") is not None:
                cond = self.expr(c["if_cond"], where, pre)
            lines += pre + [f"if {cond}:"]
            if verify:
                lines += [f"    if {self._calc_names[calc]}(S) & {(1 << w) - 1} != S[{slot}]:",
                          f"        S[{self.std['checksum_error']}] = 1"]
            else:
                lines += [f"    S[{slot}] = {self._calc_names[calc]}(S) & {(1 << w) - 1}",
                          f"    S[{hd.dirty}] = 1"]
        return lines

    def _pack_expr(self, hd: Header) -> str:
        if hd.var_field is None:
            terms = []
            shift = hd.nbits
            for f, w, _s in hd.fields:
                shift -= w
                v = f"(S[{hd.slots[f]}] & {(1 << w) - 1})" if _s else f"S[{hd.slots[f]}]"
                terms.append(f"{v} << {shift}" if shift else v)
            if not terms:
                return "b''"
            return f"({' | '.join(terms)}).to_bytes({hd.fixed_bytes}, 'big')"
        # Varbit header: the variable field's width comes from its width slot.
        acc = "0"
        for f, w, _s in hd.fields:
            if w == "*":
                acc = f"(({acc}) << S[{hd.var_width}] | S[{hd.slots[f]}])"
            else:
                acc = f"(({acc}) << {w} | S[{hd.slots[f]}])"
        return f"({acc}).to_bytes({hd.fixed_bytes} + S[{hd.var_width}] // 8, 'big')"

    def _gen_deparser(self) -> list[str]:
        dep = self._list("deparsers")[0]
        order = [self._hdr(name, f"deparsers[0].order[{i}]")
                 for i, name in enumerate(dep.get("order", []))]

        def size(hd: Header) -> str:
            return f"{hd.fixed_bytes}" if hd.var_field is None else \
                f"{hd.fixed_bytes} + S[{hd.var_width}] // 8"

        lines = ["def _deparse_slow(S):", "    pkt = S[0]", "    parts = []",
                 "    ap = parts.append"]
        for hd in order:
            lines += [f"    if S[{hd.valid}]:", f"        r = S[{hd.raw}]",
                      f"        ap(pkt[r:r + {size(hd)}] if r >= 0 and not S[{hd.dirty}] "
                      f"else {self._pack_expr(hd)})"]
        lines += ["    ap(pkt[S[1]:])", "    out = b''.join(parts)",
                  f"    if S[{TRUNC}]:", f"        out = out[:S[{TRUNC}]]", "    return out"]
        # The common cases: the valid headers sit where the parser found them,
        # back to back from offset 0, and either none changed (the frame is the
        # input frame) or the changed ones are patched into a copy.
        lines += ["def deparse(S):"]
        lines += _indent(self._gen_checksums(verify=False))
        lines += [f"    if S[{TRUNC}]:", "        return _deparse_slow(S)", "    o = 0", "    d = 0"]
        for hd in order:
            lines += [f"    if S[{hd.valid}]:", f"        if S[{hd.raw}] != o:",
                      "            return _deparse_slow(S)", f"        o += {size(hd)}",
                      f"        d |= S[{hd.dirty}]"]
        lines += ["    if o != S[1]:", "        return _deparse_slow(S)", "    if not d:",
                  "        return S[0]", "    b = bytearray(S[0])"]
        for hd in order:
            lines.append(f"    if S[{hd.valid}] and S[{hd.dirty}]:")
            if hd.var_field is not None:
                lines.append("        return _deparse_slow(S)")
            else:
                lines += [f"        r = S[{hd.raw}]",
                          f"        b[r:r + {hd.fixed_bytes}] = {self._pack_expr(hd)}"]
        lines.append("    return bytes(b)")
        return lines

    # -- the fused per-packet function --------------------------------------------------
    def _function_body(self, name: str) -> list[str] | None:
        """The body lines (one indentation level removed) of a generated function."""
        lines = self.source.split("\n")
        head = f"def {name}("
        for i, ln in enumerate(lines):
            if ln.startswith(head):
                body = []
                for b in lines[i + 1:]:
                    if b and not b.startswith(" "):
                        break
                    body.append(b[4:])
                return body
        return None

    def _mat_inline(self, index: int) -> list[str] | None:
        """The body of `_mat_<index>` on the fused function's locals."""
        hd = next((h for h in self.headers.values() if h.index == index), None)
        if hd is None or hd.var_field is not None:
            return None
        lines = [f"if S_{hd.raw} >= 0:", f"    off = S_{hd.raw}"]
        bit = 0
        for f, w, signed in hd.fields:
            if (hd.name, f) not in self.read_fields:
                o = f"off+{bit // 8}" if bit // 8 else "off"
                val = self._read_bits(f"S_{PKT}", o, bit % 8, w)
                if signed:
                    val = f"_sx({val}, {w})"
                lines.append(f"    S_{hd.slots[f]} = {val}")
            bit += w
        return lines

    def _localize(self, body: list[str], result: str | None, nslots: int) -> list[str] | None:
        """A function body rewritten for the fused function, or None if it cannot be.

        `S[k]` becomes the local `S_k`; `return` leaves the enclosing
        `for _ in _ONCE:` (`return X` first stores X in `result`); a statement that
        uses the state list another way (a helper such as `_mat_3(S)` or
        `_deparse_slow(S)`, a computed index) gets the list rebuilt from the locals
        before it and the locals reloaded after it."""
        allv = ", ".join(f"S_{k}" for k in range(nslots))
        loops: list[int] = []  # indentation of enclosing for/while headers
        out = []
        for ln in body:
            st = ln.lstrip()
            if not st:
                continue
            ind = ln[:len(ln) - len(st)]
            while loops and len(ind) <= loops[-1]:
                loops.pop()
            if st.startswith(("for ", "while ")):
                loops.append(len(ind))
            m = _MAT_RE.match(st)
            if m is not None:
                inline = self._mat_inline(int(m.group(1)))
                if inline is not None:
                    out += [ind + x for x in inline]
                    continue
            uses_list = _S_RE.search(_SLOT_RE.sub("", st)) is not None
            if uses_list:  # on the rebuilt list `_S`, slots included
                if st.endswith(":") and not st.startswith("if "):
                    return None  # no place for the rebuild before an elif/else/loop
                out.append(f"{ind}_S = @STATE@")
                st = _S_RE.sub("_S", st)
            else:
                st = _SLOT_RE.sub(r"S_\1", st)
            if st == "return" or st.startswith("return "):
                if loops:
                    return None  # `break` would leave the wrong loop
                if st != "return":
                    if result is None:
                        return None
                    out.append(f"{ind}{result} = {st[7:]}")
                out.append(f"{ind}break")
                continue
            out.append(ind + st)
            if uses_list and not st.endswith(":"):
                out.append(f"{ind}{allv} = _S")
                self._fused_reloads = True
        return out

    def _gen_fused(self) -> str | None:
        """One function for the switch's fast path: a new packet through parser,
        ingress, an idle unlimited egress port, egress and deparser, with the
        per-packet state in local variables instead of a list.

            fused(pkt, port, now_us, tm_ports) ->
                None                  dropped at the end of ingress
                (PortQueue, frame)    the frame to transmit on that port
                (1, S)                ingress done, something special to do (clone,
                                      digest, resubmit, multicast): the caller goes on
                (2, S)                ingress done, the packet must be queued
                (3, S)                egress done, something special (or a drop)

        Same semantics as the separate functions (its pieces are their bodies,
        rewritten by _localize); None when the program uses what that cannot
        rewrite (parser loops, `exit` inside a loop, ...)."""
        n = self.nslots
        std = self.std
        self._fused_reloads = False
        sb = self._function_body("_parse_states")
        if sb is not None:
            wrapper = self._function_body("parse")
            parse = self._localize(sb, None, n)
            verify = self._localize(wrapper[1:], None, n) if wrapper else None
            if parse is None or verify is None:
                return None
            parse = ["for _ in _ONCE:"] + _indent(parse) + verify
        else:
            pb = self._localize(self._function_body("parse") or [], None, n)
            if pb is None:
                # A parser loop (header stacks): the parser function on the list.
                allv = ", ".join(f"S_{k}" for k in range(n))
                parse = ["_S = @STATE@", "parse(_S, pkt)", f"{allv} = _S"]
                self._fused_reloads = True
            else:
                parse = ["for _ in _ONCE:"] + _indent(pb or ["pass"])
        ib = self._localize(self._function_body("ingress") or [], None, n)
        eb = self._localize(self._function_body("egress") or [], None, n)
        db = self._localize(self._function_body("deparse") or [], "out", n)
        if ib is None or eb is None or db is None:
            return None
        def v(name):
            return f"S_{std[name]}"
        glue = ["ingress_port", "packet_length", "ingress_global_timestamp", "mcast_grp",
                "egress_spec", "instance_type", "enq_timestamp", "egress_global_timestamp",
                "enq_qdepth", "deq_qdepth", "deq_timedelta", "egress_port"]
        # Slots the code names; the others keep their template value, written as
        # constants where the whole state is rebuilt (unless some helper writes
        # into the rebuilt list: then every slot is a local).
        used = set(range(n))
        if not self._fused_reloads:
            used = {int(x) for ln in (*parse, *ib, *eb) for x in _LOCAL_RE.findall(ln)
                    if not ln.lstrip().startswith("_S = @")}
            used |= {int(x) for ln in db for x in _LOCAL_RE.findall(ln)
                     if not ln.lstrip().startswith("_S = @")}
            used |= {PKT, PAYLOAD, SPECIAL} | {std[g] for g in glue}
        if any(not isinstance(self.template[k], (int, bytes, type(None)))
               for k in range(n) if k not in used):
            used = set(range(n))
        full = ", ".join(f"S_{k}" if k in used else repr(self.template[k]) for k in range(n))
        state = f"[{full}]"
        order = sorted(used)
        self.ns["_TPL"] = tuple(self.template[k] for k in order)
        self.ns["_ONCE"] = (None,)
        lines = ["def fused(pkt, port, now_us, tm_ports):",
                 f"    {', '.join(f'S_{k}' for k in order)}{',' if len(order) == 1 else ''} = _TPL",
                 f"    S_{PKT} = pkt", f"    {v('ingress_port')} = port",
                 f"    {v('packet_length')} = len(pkt)",
                 f"    {v('ingress_global_timestamp')} = now_us"]
        lines += _indent(parse)
        lines += _indent(["for _ in _ONCE:"] + _indent(ib or ["pass"]))
        lines += [f"    if S_{SPECIAL} or {v('mcast_grp')}:", f"        return 1, {state}",
                  f"    spec = {v('egress_spec')}", f"    if spec == {DROP_PORT}:",
                  "        return None", f"    {v('instance_type')} = 0",
                  "    pq = tm_ports.get(spec)",
                  "    if pq is None or not pq.fast or pq.scheduled:",
                  f"        return 2, {state}",
                  f"    {v('enq_timestamp')} = {v('egress_global_timestamp')} = now_us",
                  f"    {v('enq_qdepth')} = {v('deq_qdepth')} = {v('deq_timedelta')} = 0",
                  f"    {v('egress_port')} = spec",
                  f"    {v('egress_spec')} = {DROP_PORT + 1}"]
        lines += _indent(["for _ in _ONCE:"] + _indent(eb or ["pass"]))
        lines += [f"    if S_{SPECIAL} or {v('egress_spec')} == {DROP_PORT}:",
                  f"        return 3, {state}", "    out = None"]
        lines += _indent(["for _ in _ONCE:"] + _indent(db or ["pass"]))
        lines += ["    return pq, out"]
        return "\n".join(ln.replace("@STATE@", state) for ln in lines) + "\n"

    # -- helpers for the switch --------------------------------------------------------
    def digest_values(self, lid: int, S: list) -> tuple[str, tuple[int, ...]] | None:
        ll = self.learn_lists.get(lid)
        if ll is None:
            return None
        name, slots = ll
        return name, tuple(S[k] for k in slots)


def _sign_extend(v: int, w: int) -> int:
    v &= (1 << w) - 1
    return v - (1 << w) if v >> (w - 1) else v


def _two_comp_mod(v: int, w: int) -> int:
    return _sign_extend(v, w)


def _sat_cast(v: int, w: int) -> int:
    lo, hi = -(1 << (w - 1)), (1 << (w - 1)) - 1
    return max(lo, min(hi, v))


def _usat_cast(v: int, w: int) -> int:
    return max(0, min((1 << w) - 1, v))


def load(path: str, **kw) -> Program:
    try:
        with open(path) as f:
            j = json.load(f)
    except json.JSONDecodeError as e:
        raise ProgramError(f"{path}: not valid JSON: {e}") from None
    return Program(j, **kw)


def main(argv: list[str] | None = None) -> int:
    """`python -m p4switch.program --dump prog.json`: print the generated Python."""
    import argparse
    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument("json")
    ap.add_argument("--dump", action="store_true")
    args = ap.parse_args(argv)
    try:
        prog = load(args.json)
    except ProgramError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    if args.dump:
        print(prog.source)
        print("# -- the fused fast path (Program.fused) --")
        print(prog.fused_source or "# (none: this program uses the separate functions)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
