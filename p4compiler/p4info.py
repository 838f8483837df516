"""P4Info (p4.config.v1) with p4c's naming and id rules.

Ids are (resource-type prefix << 24) | (24 bits of a Jenkins one-at-a-time hash
of the fully-qualified name), collisions resolved by probing upwards, names
hashed in sorted order; @id annotations win (the prefix is added if missing).
Aliases are the shortest unique dot-suffix over all names, as in p4c.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from p4.config.v1 import p4info_pb2

from . import ir
from .bmv2 import _flat_fields
from .errors import CompileError, Location
from .typecheck import ActionEntity, InstanceEntity, TableEntity, TypedProgram
from .typecheck_entities import TypedActionRef

ACTION = p4info_pb2.P4Ids.ACTION
TABLE = p4info_pb2.P4Ids.TABLE
VALUE_SET = p4info_pb2.P4Ids.VALUE_SET
CONTROLLER_HEADER = p4info_pb2.P4Ids.CONTROLLER_HEADER
ACTION_PROFILE = p4info_pb2.P4Ids.ACTION_PROFILE
COUNTER = p4info_pb2.P4Ids.COUNTER
DIRECT_COUNTER = p4info_pb2.P4Ids.DIRECT_COUNTER
METER = p4info_pb2.P4Ids.METER
DIRECT_METER = p4info_pb2.P4Ids.DIRECT_METER
REGISTER = p4info_pb2.P4Ids.REGISTER
DIGEST = p4info_pb2.P4Ids.DIGEST

_NOT_PREAMBLE_ANNOTATIONS = {"name", "id", "brief", "description", "hidden", "tableonly",
                             "defaultonly", "match", "pure", "noSideEffects"}
# Annotations that configure an action selector in the P4Info, not listed in its preamble.
_SELECTOR_ANNOTATIONS = {"max_group_size", "selector_size_semantics", "max_member_weight"}
_MATCH_TYPES = {
    "exact": p4info_pb2.MatchField.EXACT, "lpm": p4info_pb2.MatchField.LPM,
    "ternary": p4info_pb2.MatchField.TERNARY, "range": p4info_pb2.MatchField.RANGE,
    "optional": p4info_pb2.MatchField.OPTIONAL,
}
_COUNTER_UNITS = {
    "packets": p4info_pb2.CounterSpec.PACKETS, "bytes": p4info_pb2.CounterSpec.BYTES,
    "packets_and_bytes": p4info_pb2.CounterSpec.BOTH,
}
_METER_UNITS = {"packets": p4info_pb2.MeterSpec.PACKETS, "bytes": p4info_pb2.MeterSpec.BYTES}


def jenkins_one_at_a_time(data: bytes) -> int:
    """Bob Jenkins' one-at-a-time hash, 32-bit (p4c hashes P4Info names with it)."""
    h = 0
    for b in data:
        h = (h + b) & 0xFFFFFFFF
        h = (h + (h << 10)) & 0xFFFFFFFF
        h ^= h >> 6
    h = (h + (h << 3)) & 0xFFFFFFFF
    h ^= h >> 11
    h = (h + (h << 15)) & 0xFFFFFFFF
    return h


@dataclass
class SymbolTable:
    """Names per resource type and their ids, assigned the way p4c does."""

    symbols: dict[int, dict[str, int | None]] = field(default_factory=dict)
    assigned: set[int] = field(default_factory=set)
    all_names: set[str] = field(default_factory=set)

    def add(self, kind: int, name: str, annotations: tuple[ir.Annotation, ...] = (),
            loc: Location | None = None) -> None:
        table = self.symbols.setdefault(kind, {})
        if name in table:
            return
        explicit = _id_annotation(annotations)
        if explicit is not None:
            prefix = kind << 24
            if explicit & 0xFF000000 and explicit & 0xFF000000 != prefix:
                raise CompileError(loc, f"{name}: @id has the wrong 8-bit prefix")
            explicit |= prefix
            if explicit in self.assigned:
                raise CompileError(loc, f"@id {explicit} is assigned to multiple declarations")
            self.assigned.add(explicit)
        table[name] = explicit
        self.all_names.add(name)

    def assign_ids(self) -> None:
        for kind in sorted(self.symbols):
            table = self.symbols[kind]
            for name in sorted(n for n, i in table.items() if i is None):
                h = jenkins_one_at_a_time(name.encode())
                for probe in range(1 << 24):
                    ident = (kind << 24) | ((h + probe) & 0xFFFFFF)
                    if ident not in self.assigned:
                        break
                else:
                    raise CompileError(None, f"no available id to represent {name}")
                self.assigned.add(ident)
                table[name] = ident

    def id(self, kind: int, name: str) -> int:
        ident = self.symbols[kind][name]
        assert ident is not None
        return ident

    def alias(self, name: str) -> str:
        """The shortest dot-suffix of `name` that no other symbol shares."""
        parts = name.split(".")
        for n in range(1, len(parts) + 1):
            suffix = ".".join(parts[-n:])
            clash = any(other != name and (other == suffix or other.endswith("." + suffix))
                        for other in self.all_names)
            if not clash:
                return suffix
        return name


def _id_annotation(annotations: tuple[ir.Annotation, ...]) -> int | None:
    a = ir.annotation(annotations, "id")
    if a is None:
        return None
    if not a.args or not isinstance(a.args[0], ir.Lit) or a.args[0].value < 0:
        raise CompileError(a.loc, "@id should be an unsigned integer")
    return a.args[0].value


def _int_annotation(annotations: tuple[ir.Annotation, ...], name: str) -> int | None:
    """The integer literal of @name(N), or None without one."""
    a = ir.annotation(annotations, name)
    if a is None or not a.args or not isinstance(a.args[0], ir.Lit):
        return None
    return a.args[0].value


def _render_annotation(a: ir.Annotation) -> str:
    if not a.args and not a.kv:
        return f"@{a.name}"
    parts = [_render_value(x) for x in a.args] + [f"{k}={_render_value(v)}" for k, v in a.kv]
    return f"@{a.name}(" + ", ".join(parts) + ")"


def _render_value(x: Any) -> str:
    if isinstance(x, ir.StrLit):
        return '"' + x.value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(x, ir.Lit):
        return str(x.value)
    if isinstance(x, ir.BoolLit):
        return "true" if x.value else "false"
    if isinstance(x, ir.Name):
        return x.name
    return str(x)


def _translation(t: ir.NewType) -> tuple[str, int, bool] | None:
    """(uri, controller bitwidth, is_string) of @p4runtime_translation on a `type`."""
    a = ir.annotation(t.annotations, "p4runtime_translation")
    if a is None or len(a.args) < 2 or not isinstance(a.args[0], ir.StrLit):
        return None
    x = a.args[1]
    if isinstance(x, ir.Lit):
        return a.args[0].value, x.value, False
    if isinstance(x, ir.TypeRef) and x.kind == "string":
        return a.args[0].value, 0, True
    if isinstance(x, ir.TypeRef) and x.kind == "bit" and isinstance(x.width, ir.Lit):
        return a.args[0].value, x.width.value, False
    raise CompileError(a.loc, "@p4runtime_translation needs (\"uri\", N), (\"uri\", bit<N>) "
                       "or (\"uri\", string)")


def _is_serializable_enum(t: ir.Type | None) -> bool:
    return t is not None and isinstance(ir.unwrap(t), ir.Enum) and \
        ir.unwrap(t).underlying is not None


def _enum_value(m: ir.Member) -> int:
    """The value of a serializable enum member (`E.A`)."""
    e = ir.unwrap(m.type)
    assert isinstance(e, ir.Enum)
    return e.values[e.members.index(m.member)]


def _is_hidden(annotations: tuple[ir.Annotation, ...]) -> bool:
    return ir.annotation(annotations, "hidden") is not None


class P4InfoBuilder:
    def __init__(self, program: TypedProgram):
        self.p = program
        self.symbols = SymbolTable()
        self.info = p4info_pb2.P4Info()

    # -- what the control plane sees

    def referenced_actions(self) -> list[ActionEntity]:
        """Actions a table references or an apply block calls, in p4c's order: block by
        block (V1Switch's order), the top-level actions the block uses first (p4c's
        LocalizeAllActions copies them to the start of the control), in program order,
        then the block's own, in declaration order.

        An action only called from another action is not listed: p4c inlines it."""
        seen: dict[int, ActionEntity] = {}
        ordered: list[ActionEntity] = []
        for b in self.p.blocks.values():
            used: dict[int, ActionEntity] = {}
            for t in b.tables:
                for r in t.actions:
                    used.setdefault(id(r.action), r.action)
            for a in b.direct_actions:
                used.setdefault(id(a), a)
            seen.update(used)
            ordered += [a for a in self.p.global_actions if id(a) in used]
            ordered += [a for a in b.actions if id(a) in used]
        ordered += [a for a in seen.values() if a not in ordered]
        unique: dict[str, ActionEntity] = {}
        for a in ordered:
            unique.setdefault(a.qualified, a)
        return list(unique.values())

    def table_action_names(self) -> set[str]:
        """Actions with action data in P4Info: p4c makes a direct call's parameters locals,
        so an action only called from an apply block has no parameters."""
        return {r.action.qualified for b in self.p.blocks.values() for t in b.tables
                for r in t.actions}

    def tables(self) -> list[TableEntity]:
        return [t for b in self.p.blocks.values() for t in b.tables
                if not _is_hidden(t.annotations)]

    def instances(self) -> list[InstanceEntity]:
        out = list(self.p.global_instances)
        for b in self.p.blocks.values():
            out.extend(b.instances)
        return [i for i in out if not _is_hidden(i.annotations)]

    # -- build

    def build(self) -> p4info_pb2.P4Info:
        actions = [a for a in self.referenced_actions() if not _is_hidden(a.annotations)]
        tables = self.tables()
        instances = self.instances()
        kinds = {"counter": COUNTER, "direct_counter": DIRECT_COUNTER, "meter": METER,
                 "direct_meter": DIRECT_METER, "register": REGISTER,
                 "action_profile": ACTION_PROFILE, "action_selector": ACTION_PROFILE}
        s = self.symbols
        for a in actions:
            s.add(ACTION, a.qualified, a.annotations, a.loc)
        for t in tables:
            s.add(TABLE, t.qualified, t.annotations, t.loc)
        for i in instances:
            if i.type.name in kinds:
                s.add(kinds[i.type.name], i.qualified, i.annotations, i.decl.loc)
        for b in self.p.blocks.values():
            for vs in b.value_sets:
                s.add(VALUE_SET, vs.qualified, vs.annotations, vs.loc)
        for h in self.p.controller_headers:
            s.add(CONTROLLER_HEADER, h.name, h.annotations)
        digests = self.digest_types()
        for name, _ in digests:
            s.add(DIGEST, name)
        s.assign_ids()

        info = self.info
        info.pkg_info.arch = "v1model"
        self.add_pkg_info()
        self.add_tables(tables)
        self.add_actions(actions)
        self.add_instances(instances, tables)
        self.add_controller_headers()
        self.add_value_sets()
        self.add_digests(digests)
        return info

    def add_pkg_info(self) -> None:
        """`@pkginfo(name="...", version="...", ...)` on `main` fills pkg_info."""
        pkg = self.info.pkg_info
        for a in self.p.main_annotations:
            if a.name != "pkginfo":
                continue
            for key, value in a.kv:
                if not isinstance(value, ir.StrLit):
                    raise CompileError(a.loc, f"@pkginfo: value for '{key}' is not a string")
                if key in ("name", "version", "organization", "contact", "url", "arch"):
                    setattr(pkg, key, value.value)
                elif key in ("brief", "description"):
                    setattr(pkg.doc, key, value.value)
                else:
                    raise CompileError(a.loc, f"@pkginfo: unknown key '{key}'")

    def preamble(self, pre: Any, kind: int, name: str, annotations: tuple[ir.Annotation, ...],
                 display: str | None = None) -> None:
        pre.id = self.symbols.id(kind, name)
        pre.name = display or name
        pre.alias = display or self.symbols.alias(name)
        for a in annotations:
            if a.name not in _NOT_PREAMBLE_ANNOTATIONS:
                pre.annotations.append(_render_annotation(a))
        brief = ir.annotation_string(annotations, "brief")
        if brief is not None:
            pre.doc.brief = brief
        desc = ir.annotation_string(annotations, "description")
        if desc is not None:
            pre.doc.description = desc

    def add_tables(self, tables: list[TableEntity]) -> None:
        for t in tables:
            pt = self.info.tables.add()
            self.preamble(pt.preamble, TABLE, t.qualified, t.annotations)
            n = 0
            for k in t.keys:
                if k.match_kind == "selector":
                    continue
                n += 1
                mf = pt.match_fields.add()
                mf.id = _id_annotation(k.annotations) or n
                mf.name = k.name
                for a in k.annotations:
                    if a.name not in _NOT_PREAMBLE_ANNOTATIONS:
                        mf.annotations.append(_render_annotation(a))
                self.typed_width(mf, k.expr.type)
                if k.match_kind in _MATCH_TYPES:
                    mf.match_type = _MATCH_TYPES[k.match_kind]
                else:
                    mf.other_match_type = k.match_kind
            for r in t.actions:
                if _is_hidden(r.action.annotations):
                    continue
                ar = pt.action_refs.add()
                ar.id = self.symbols.id(ACTION, r.action.qualified)
                anns = r.annotations
                if ir.annotation(anns, "tableonly"):
                    ar.scope = p4info_pb2.ActionRef.TABLE_ONLY
                elif ir.annotation(anns, "defaultonly"):
                    ar.scope = p4info_pb2.ActionRef.DEFAULT_ONLY
                for a in anns:
                    ar.annotations.append(_render_annotation(a))
            if t.default_action is not None and t.default_const:
                pt.const_default_action_id = self.symbols.id(ACTION,
                                                             t.default_action.action.qualified)
            if t.default_action is not None and not _is_hidden(
                    t.default_action.action.annotations):
                self.initial_default_action(pt.initial_default_action, t.default_action)
            if t.implementation is not None:
                pt.implementation_id = self.symbols.id(ACTION_PROFILE, t.implementation.qualified)
            if t.counters is not None:
                pt.direct_resource_ids.append(self.symbols.id(DIRECT_COUNTER,
                                                              t.counters.qualified))
            if t.meters is not None:
                pt.direct_resource_ids.append(self.symbols.id(DIRECT_METER, t.meters.qualified))
            pt.size = t.size if t.size is not None else 1024
            if t.support_timeout:
                pt.idle_timeout_behavior = p4info_pb2.Table.NOTIFY_CONTROL
            if t.entries is not None:
                pt.is_const_table = t.entries_const
                if t.entries:
                    pt.has_initial_entries = True

    def initial_default_action(self, msg: Any, ref: TypedActionRef) -> None:
        """The table's default action as the program sets it (newer p4c writes it on every
        table): action data big-endian in the parameter's full width. Left out if an
        argument is not a literal (the type checker folds constants)."""
        args = []
        for i, (p, v) in enumerate(zip(ref.action.data_params, ref.args, strict=True), 1):
            if isinstance(v, ir.BoolLit):
                value = int(v.value)
            elif isinstance(v, ir.Lit):
                value = v.value
            elif isinstance(v, ir.Member) and _is_serializable_enum(v.type):
                value = _enum_value(v)
            else:
                return
            width = ir.unwrap(p.type).width() or 1
            args.append((_id_annotation(p.annotations) or i,
                         (value & ((1 << width) - 1)).to_bytes((width + 7) // 8, "big")))
        msg.action_id = self.symbols.id(ACTION, ref.action.qualified)
        for param_id, data in args:
            arg = msg.arguments.add()
            arg.param_id = param_id
            arg.value = data

    def add_actions(self, actions: list[ActionEntity]) -> None:
        with_data = self.table_action_names()
        for a in actions:
            pa = self.info.actions.add()
            self.preamble(pa.preamble, ACTION, a.qualified, a.annotations)
            params = a.data_params if a.qualified in with_data else ()
            for i, p in enumerate(params, 1):
                pp = pa.params.add()
                pp.id = _id_annotation(p.annotations) or i
                pp.name = ir.annotation_string(p.annotations, "name") or p.name
                self.typed_width(pp, p.type)
                for ann in p.annotations:
                    if ann.name not in _NOT_PREAMBLE_ANNOTATIONS:
                        pp.annotations.append(_render_annotation(ann))

    def add_instances(self, instances: list[InstanceEntity], tables: list[TableEntity]) -> None:
        bound: dict[str, TableEntity] = {}
        profile_tables: dict[str, list[TableEntity]] = {}
        for t in tables:
            for inst in (t.counters, t.meters):
                if inst is not None:
                    bound[inst.qualified] = t
            if t.implementation is not None:
                profile_tables.setdefault(t.implementation.qualified, []).append(t)
        seen: set[str] = set()
        for i in instances:
            if i.qualified in seen:  # one instance reached twice (a control passed twice)
                continue
            seen.add(i.qualified)
            kind = i.type.name
            if kind == "counter":
                c = self.info.counters.add()
                self.preamble(c.preamble, COUNTER, i.qualified, i.annotations)
                c.spec.unit = _COUNTER_UNITS[i.args[1]]
                c.size = i.args[0]
            elif kind == "direct_counter":
                if i.qualified not in bound:
                    continue
                c = self.info.direct_counters.add()
                self.preamble(c.preamble, DIRECT_COUNTER, i.qualified, i.annotations)
                c.spec.unit = _COUNTER_UNITS[i.args[0]]
                c.direct_table_id = self.symbols.id(TABLE, bound[i.qualified].qualified)
            elif kind == "meter":
                m = self.info.meters.add()
                self.preamble(m.preamble, METER, i.qualified, i.annotations)
                m.spec.unit = _METER_UNITS[i.args[1]]
                m.size = i.args[0]
            elif kind == "direct_meter":
                if i.qualified not in bound:
                    continue
                m = self.info.direct_meters.add()
                self.preamble(m.preamble, DIRECT_METER, i.qualified, i.annotations)
                m.spec.unit = _METER_UNITS[i.args[0]]
                m.direct_table_id = self.symbols.id(TABLE, bound[i.qualified].qualified)
            elif kind == "register":
                r = self.info.registers.add()
                self.preamble(r.preamble, REGISTER, i.qualified, i.annotations)
                if i.type.type_args:
                    self.type_spec(r.type_spec, i.type.type_args[0])
                else:
                    r.type_spec.bitstring.bit.bitwidth = 32
                r.size = i.args[0]
            elif kind in ("action_profile", "action_selector"):
                self.add_action_profile(i, kind == "action_selector",
                                        profile_tables.get(i.qualified, []))

    def add_action_profile(self, i: InstanceEntity, with_selector: bool,
                           tables: list[TableEntity]) -> None:
        """As p4c's addActionProfile: @max_group_size, @selector_size_semantics and
        @max_member_weight configure a selector (an action profile without one ignores
        them) and are not repeated as preamble annotations; a selector's size counts the
        members' weights unless @selector_size_semantics("sum_of_members") says otherwise."""
        ap = self.info.action_profiles.add()
        anns = tuple(a for a in i.annotations if a.name not in _SELECTOR_ANNOTATIONS)
        self.preamble(ap.preamble, ACTION_PROFILE, i.qualified, anns)
        for t in tables:
            ap.table_ids.append(self.symbols.id(TABLE, t.qualified))
        ap.with_selector = with_selector
        ap.size = i.args[1] if with_selector else i.args[0]
        if not with_selector:
            return
        mgs = _int_annotation(i.annotations, "max_group_size")
        if mgs is not None:
            ap.max_group_size = mgs
        if ir.annotation_string(i.annotations, "selector_size_semantics") == "sum_of_members":
            ap.sum_of_members.SetInParent()
            weight = _int_annotation(i.annotations, "max_member_weight")
            if weight is not None:
                ap.sum_of_members.max_member_weight = weight
        else:
            ap.sum_of_weights.SetInParent()

    def add_controller_headers(self) -> None:
        for h in self.p.controller_headers:
            if _is_hidden(h.annotations):
                continue
            cname = ir.annotation_string(h.annotations, "controller_header")
            if cname is None:
                raise CompileError(None, f"{h.name}: @controller_header needs a string")
            cpm = self.info.controller_packet_metadata.add()
            self.preamble(cpm.preamble, CONTROLLER_HEADER, h.name, h.annotations, cname)
            for i, f in enumerate(_flat_fields(h), 1):
                md = cpm.metadata.add()
                md.id = _id_annotation(f.annotations) or i
                md.name = f.name
                self.typed_width(md, f.type)

    def add_value_sets(self) -> None:
        for b in self.p.blocks.values():
            for vs in b.value_sets:
                v = self.info.value_sets.add()
                self.preamble(v.preamble, VALUE_SET, vs.qualified, vs.annotations)
                t = ir.unwrap(vs.type)
                fields = t.fields if isinstance(t, ir.StructLike) else (
                    ir.StructField("", t),)
                for i, f in enumerate(fields, 1):
                    mf = v.match.add()
                    mf.id = i
                    if f.name:
                        mf.name = f.name
                    self.typed_width(mf, f.type)
                    mf.match_type = p4info_pb2.MatchField.EXACT
                v.size = vs.size

    def digest_types(self) -> list[tuple[str, ir.Type]]:
        out: dict[str, ir.Type] = {}
        for t, _loc in self.p.digests:
            ut = ir.unwrap(t)
            name = ut.name if isinstance(ut, ir.StructLike) and ut.name else \
                f"digest_{len(out)}"
            out.setdefault(name, ut)
        return list(out.items())

    def add_digests(self, digests: list[tuple[str, ir.Type]]) -> None:
        for name, t in digests:
            d = self.info.digests.add()
            self.preamble(d.preamble, DIGEST, name, ())
            d.type_spec.struct.name = name
            st = self.info.type_info.structs[name]
            fields = t.fields if isinstance(t, ir.StructLike) else ()
            for f in fields:
                m = st.members.add()
                m.name = f.name
                self.type_spec(m.type_spec, f.type)

    # ------------------------------------------------------------ user-defined types

    def typed_width(self, msg: Any, t: ir.Type | None) -> None:
        """`bitwidth` and `type_name` of a MatchField / Param / Metadata as the P4Runtime
        guidance for `type` declarations says (and p4c does): a `type` gives its name,
        and with @p4runtime_translation(uri, N | bit<N> | string) the SDN width."""
        if isinstance(t, ir.NewType):
            msg.type_name.name = t.name
            self.add_new_type(t)
            tr = _translation(t)
            if tr is not None:
                msg.bitwidth = tr[1]
                return
        ut = ir.unwrap(t) if t is not None else None
        if isinstance(ut, ir.Enum) and ut.underlying is not None:
            # p4c gives only the bitwidth here, but still lists the enum in type_info.
            self.add_serializable_enum(ut)
        msg.bitwidth = (ut.width() if ut is not None else 0) or 0

    def add_new_type(self, t: ir.NewType) -> None:
        if t.name in self.info.type_info.new_types:
            return
        spec = self.info.type_info.new_types[t.name]
        tr = _translation(t)
        if tr is not None:
            spec.translated_type.uri = tr[0]
            if tr[2]:
                spec.translated_type.sdn_string.SetInParent()
            else:
                spec.translated_type.sdn_bitwidth = tr[1]
        else:
            # p4c gives the representation, also through a chain (`type A_t B_t;`).
            base = t.base
            while isinstance(base, ir.NewType):
                base = base.base
            self.type_spec(spec.original_type, base)

    def type_spec(self, spec: Any, t: ir.Type) -> None:
        """A P4DataTypeSpec; serializable enums and `type`s get type_info entries."""
        if isinstance(t, ir.NewType):
            spec.new_type.name = t.name
            self.add_new_type(t)
            return
        if isinstance(t, ir.Enum) and t.underlying is not None:
            spec.serializable_enum.name = t.name
            self.add_serializable_enum(t)
            return
        if isinstance(t, ir.Enum):
            spec.enum.name = t.name
            e = self.info.type_info.enums[t.name]
            if not e.members:
                for m in t.members:
                    e.members.add().name = m
            return
        if isinstance(t, ir.Bool):
            spec.bool.SetInParent()
        elif isinstance(t, ir.Bits) and t.signed:
            spec.bitstring.int.bitwidth = t.bits
        elif isinstance(t, ir.Varbit):
            spec.bitstring.varbit.max_bitwidth = t.max_bits
        elif isinstance(t, ir.ErrorT):
            spec.error.SetInParent()
        else:
            spec.bitstring.bit.bitwidth = t.width() or 0

    def add_serializable_enum(self, t: ir.Enum) -> None:
        if t.name in self.info.type_info.serializable_enums:
            return
        assert t.underlying is not None
        se = self.info.type_info.serializable_enums[t.name]
        se.underlying_type.bitwidth = t.underlying.bits
        nbytes = max(1, (t.underlying.bits + 7) // 8)
        for name, value in zip(t.members, t.values, strict=True):
            m = se.members.add()
            m.name = name
            m.value = (value & ((1 << t.underlying.bits) - 1)).to_bytes(nbytes, "big")


def build(program: TypedProgram) -> p4info_pb2.P4Info:
    return P4InfoBuilder(program).build()


def to_text(info: p4info_pb2.P4Info) -> str:
    from google.protobuf import text_format

    header = "# proto-file: p4/config/v1/p4info.proto\n# proto-message: p4.config.v1.P4Info\n\n"
    return header + text_format.MessageToString(info)
