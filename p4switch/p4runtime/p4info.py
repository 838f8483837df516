"""The loaded pipeline as the server sees it: P4Info ids, widths and kinds, plus
the few facts only the bmv2 JSON has (initial default actions, const entries).

P4Info `name` equals the bmv2 JSON `name` for every object the data plane
knows (tables, actions, counters, meters, registers, action profiles), which
is how ids are translated to the names of `runtime_api.Dataplane`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from p4.config.v1 import p4info_pb2

from ..runtime_api import MatchKind
from .errors import invalid

MATCH_KINDS = {
    p4info_pb2.MatchField.EXACT: MatchKind.EXACT,
    p4info_pb2.MatchField.LPM: MatchKind.LPM,
    p4info_pb2.MatchField.TERNARY: MatchKind.TERNARY,
    p4info_pb2.MatchField.RANGE: MatchKind.RANGE,
    p4info_pb2.MatchField.OPTIONAL: MatchKind.OPTIONAL,
}
# Match kinds that make a table need entry priorities.
PRIORITY_KINDS = {MatchKind.TERNARY, MatchKind.RANGE, MatchKind.OPTIONAL}


@dataclass(frozen=True)
class MatchFieldInfo:
    id: int
    name: str
    bitwidth: int
    kind: MatchKind


@dataclass(frozen=True)
class ParamInfo:
    id: int
    name: str
    bitwidth: int


@dataclass
class ActionInfo:
    id: int
    name: str
    params: list[ParamInfo]
    params_by_id: dict[int, ParamInfo] = field(default_factory=dict)


@dataclass
class TableInfo:
    id: int
    name: str
    match_fields: list[MatchFieldInfo]
    fields_by_id: dict[int, MatchFieldInfo]
    action_scopes: dict[int, int]  # action id -> p4info ActionRef.Scope
    const_default_action_id: int
    implementation_id: int
    direct_counter_id: int
    direct_meter_id: int
    is_const: bool
    size: int
    needs_priority: bool
    supports_idle_timeout: bool = False


@dataclass(frozen=True)
class ActionProfileInfo:
    id: int
    name: str
    table_ids: tuple[int, ...]
    with_selector: bool
    size: int
    max_group_size: int


@dataclass(frozen=True)
class CounterInfo:
    id: int
    name: str
    unit: int  # p4info CounterSpec.Unit
    size: int  # 0 for direct counters
    table_id: int = 0  # direct counters only


@dataclass(frozen=True)
class MeterInfo:
    id: int
    name: str
    unit: int
    size: int
    table_id: int = 0


@dataclass(frozen=True)
class RegisterInfo:
    id: int
    name: str
    bitwidth: int
    size: int


@dataclass(frozen=True)
class DigestInfo:
    id: int
    name: str
    member_bitwidths: tuple[int, ...]  # one per struct member, or one for a bit<W>
    is_struct: bool


@dataclass(frozen=True)
class ValueSetInfo:
    id: int
    name: str
    widths: tuple[int, ...]  # one per match field, in field-id order
    size: int


@dataclass(frozen=True)
class ControllerHeader:
    """A @controller_header("packet_in"/"packet_out") header: fields in wire order."""

    id: int
    name: str
    fields: tuple[ParamInfo, ...]

    @property
    def bitwidth(self) -> int:
        return sum(f.bitwidth for f in self.fields)


class PipelineInfo:
    """Indexes of one P4Info (by id and by name) checked against its bmv2 JSON."""

    def __init__(self, p4info: p4info_pb2.P4Info, bmv2_json: dict):
        self.p4info = p4info
        self.bmv2_json = bmv2_json
        self.actions: dict[int, ActionInfo] = {}
        self.tables: dict[int, TableInfo] = {}
        self.action_profiles: dict[int, ActionProfileInfo] = {}
        self.counters: dict[int, CounterInfo] = {}
        self.direct_counters: dict[int, CounterInfo] = {}
        self.meters: dict[int, MeterInfo] = {}
        self.direct_meters: dict[int, MeterInfo] = {}
        self.registers: dict[int, RegisterInfo] = {}
        self.digests: dict[int, DigestInfo] = {}
        self.digests_by_name: dict[str, DigestInfo] = {}
        self.value_sets: dict[int, ValueSetInfo] = {}
        self.packet_in: ControllerHeader | None = None
        self.packet_out: ControllerHeader | None = None
        self._seen_ids: set[int] = set()
        self._index()
        self._check_against_json()

    # indexing ------------------------------------------------------------------
    def _claim(self, preamble: p4info_pb2.Preamble, what: str) -> None:
        if preamble.id == 0:
            raise invalid(f"P4Info {what} '{preamble.name}' has id 0")
        if preamble.id in self._seen_ids:
            raise invalid(f"P4Info id {preamble.id} ({what} '{preamble.name}') is used twice")
        self._seen_ids.add(preamble.id)

    def _index(self) -> None:
        p = self.p4info
        for a in p.actions:
            self._claim(a.preamble, "action")
            params = [ParamInfo(x.id, x.name, x.bitwidth) for x in a.params]
            self.actions[a.preamble.id] = ActionInfo(
                a.preamble.id, a.preamble.name, params, {x.id: x for x in params}
            )
        for dc in p.direct_counters:
            self._claim(dc.preamble, "direct counter")
            self.direct_counters[dc.preamble.id] = CounterInfo(
                dc.preamble.id, dc.preamble.name, dc.spec.unit, 0, dc.direct_table_id
            )
        for dm in p.direct_meters:
            self._claim(dm.preamble, "direct meter")
            self.direct_meters[dm.preamble.id] = MeterInfo(
                dm.preamble.id, dm.preamble.name, dm.spec.unit, 0, dm.direct_table_id
            )
        for t in p.tables:
            self._index_table(t)
        for ap in p.action_profiles:
            self._claim(ap.preamble, "action profile")
            self.action_profiles[ap.preamble.id] = ActionProfileInfo(
                ap.preamble.id, ap.preamble.name, tuple(ap.table_ids), ap.with_selector,
                ap.size, ap.max_group_size,
            )
        for c in p.counters:
            self._claim(c.preamble, "counter")
            self.counters[c.preamble.id] = CounterInfo(
                c.preamble.id, c.preamble.name, c.spec.unit, c.size
            )
        for m in p.meters:
            self._claim(m.preamble, "meter")
            self.meters[m.preamble.id] = MeterInfo(m.preamble.id, m.preamble.name, m.spec.unit, m.size)
        for r in p.registers:
            self._claim(r.preamble, "register")
            width = r.type_spec.bitstring.bit.bitwidth or r.type_spec.bitstring.int.bitwidth
            self.registers[r.preamble.id] = RegisterInfo(r.preamble.id, r.preamble.name, width, r.size)
        for d in p.digests:
            self._claim(d.preamble, "digest")
            info = self._digest_info(d)
            self.digests[info.id] = info
            self.digests_by_name[d.preamble.name] = info
            if d.preamble.alias:
                self.digests_by_name.setdefault(d.preamble.alias, info)
        for vs in p.value_sets:
            self._index_value_set(vs)
        for cpm in p.controller_packet_metadata:
            self._index_controller_header(cpm)
        for t in self.tables.values():
            if t.implementation_id and t.implementation_id not in self.action_profiles:
                raise invalid(
                    f"table '{t.name}' has unknown implementation id {t.implementation_id}"
                )

    def _index_table(self, t) -> None:
        self._claim(t.preamble, "table")
        fields = []
        for mf in t.match_fields:
            kind = MATCH_KINDS.get(mf.match_type)
            if kind is None:
                raise invalid(
                    f"table '{t.preamble.name}': match field '{mf.name}' has unsupported "
                    f"match type {mf.other_match_type or mf.match_type}"
                )
            fields.append(MatchFieldInfo(mf.id, mf.name, mf.bitwidth, kind))
        for ref in t.action_refs:
            if ref.id not in self.actions:
                raise invalid(f"table '{t.preamble.name}' refers to unknown action id {ref.id}")
        direct_counter = next((i for i in t.direct_resource_ids if i in self.direct_counters), 0)
        direct_meter = next((i for i in t.direct_resource_ids if i in self.direct_meters), 0)
        self.tables[t.preamble.id] = TableInfo(
            id=t.preamble.id,
            name=t.preamble.name,
            match_fields=fields,
            fields_by_id={f.id: f for f in fields},
            action_scopes={ref.id: ref.scope for ref in t.action_refs},
            const_default_action_id=t.const_default_action_id,
            implementation_id=t.implementation_id,
            direct_counter_id=direct_counter,
            direct_meter_id=direct_meter,
            is_const=t.is_const_table,
            size=t.size,
            needs_priority=any(f.kind in PRIORITY_KINDS for f in fields),
            supports_idle_timeout=t.idle_timeout_behavior != p4info_pb2.Table.NO_TIMEOUT,
        )

    def _index_value_set(self, vs) -> None:
        self._claim(vs.preamble, "value set")
        fields = sorted(vs.match, key=lambda m: m.id)
        if [m.id for m in fields] != list(range(1, len(fields) + 1)):
            raise invalid(f"value set '{vs.preamble.name}': match field ids must be 1..n")
        self.value_sets[vs.preamble.id] = ValueSetInfo(
            vs.preamble.id, vs.preamble.name, tuple(m.bitwidth for m in fields), vs.size)

    def _index_controller_header(self, cpm) -> None:
        """packet_in / packet_out: their metadata, in whole bytes."""
        self._claim(cpm.preamble, "controller packet metadata")
        header = ControllerHeader(
            cpm.preamble.id, cpm.preamble.name,
            tuple(ParamInfo(m.id, m.name, m.bitwidth) for m in cpm.metadata),
        )
        if header.bitwidth % 8:
            raise invalid(
                f"controller header '{header.name}' is {header.bitwidth} bits, not whole bytes"
            )
        if cpm.preamble.name == "packet_in":
            self.packet_in = header
        elif cpm.preamble.name == "packet_out":
            self.packet_out = header

    def _digest_info(self, d: p4info_pb2.Digest) -> DigestInfo:
        spec = d.type_spec
        if spec.HasField("struct"):
            struct = self.p4info.type_info.structs.get(spec.struct.name)
            if struct is None:
                raise invalid(f"digest '{d.preamble.name}': unknown struct '{spec.struct.name}'")
            widths = tuple(m.type_spec.bitstring.bit.bitwidth for m in struct.members)
            return DigestInfo(d.preamble.id, d.preamble.name, widths, True)
        if spec.HasField("bitstring"):
            return DigestInfo(d.preamble.id, d.preamble.name, (spec.bitstring.bit.bitwidth,), False)
        raise invalid(f"digest '{d.preamble.name}': only struct and bit<W> digests are supported")

    # consistency with the bmv2 JSON ---------------------------------------------
    def _json_names(self, key: str, per_pipeline: bool = False) -> set[str]:
        j = self.bmv2_json
        if per_pipeline:
            return {o.get("name") for pl in j.get("pipelines", []) for o in pl.get(key, [])}
        return {o.get("name") for o in j.get(key, [])}

    def _parse_vset_names(self) -> set[str]:
        j = self.bmv2_json
        return {v.get("name") for v in j.get("parse_vsets", [])} | {
            v.get("name") for p in j.get("parsers", []) for v in p.get("parse_vsets", [])}

    def _check_against_json(self) -> None:
        if not isinstance(self.bmv2_json, dict) or "pipelines" not in self.bmv2_json:
            raise invalid("p4_device_config is not a bmv2 JSON (no 'pipelines')")
        # An action no table refers to (one only called from other actions, which
        # compilers inline) may be absent from the JSON: nothing can use it, and
        # simple_switch_grpc accepts such a P4Info too.
        referenced = {a for t in self.tables.values() for a in t.action_scopes}
        checks = [
            ("table", self.tables.values(), self._json_names("tables", per_pipeline=True)),
            ("action", [a for a in self.actions.values() if a.id in referenced],
             self._json_names("actions")),
            ("action profile", self.action_profiles.values(),
             self._json_names("action_profiles", per_pipeline=True)),
            ("counter", self.counters.values(), self._json_names("counter_arrays")),
            ("meter", self.meters.values(), self._json_names("meter_arrays")),
            ("register", self.registers.values(), self._json_names("register_arrays")),
            ("value set", self.value_sets.values(), self._parse_vset_names()),
        ]
        for what, objs, names in checks:
            for o in objs:
                if o.name not in names:
                    raise invalid(f"P4Info {what} '{o.name}' (id {o.id}) is not in the bmv2 JSON")

    # lookups used by the translation -------------------------------------------------
    def json_table(self, name: str) -> dict:
        for pl in self.bmv2_json.get("pipelines", []):
            for t in pl.get("tables", []):
                if t.get("name") == name:
                    return t
        return {}

    def json_action_name(self, json_action_id: int) -> str | None:
        for a in self.bmv2_json.get("actions", []):
            if a.get("id") == json_action_id:
                return a.get("name")
        return None

    def action_by_name(self, name: str) -> ActionInfo | None:
        for a in self.actions.values():
            if a.name == name:
                return a
        return None
