"""Validation and translation of P4Runtime match keys and actions.

Turns a TableEntry's `match` and an `Action` into (a) the canonical protobuf the
server stores and returns on Read and (b) the `runtime_api` values the data
plane takes, raising the spec's codes for what is malformed.
"""

from __future__ import annotations

from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from ..runtime_api import ActionCall, MatchKind, MatchParam
from . import bytestrings
from .errors import invalid, permission_denied
from .p4info import ActionInfo, MatchFieldInfo, PipelineInfo, TableInfo

# A match key as stored: ((field_id, canonical FieldMatch bytes), ...) sorted by id.
MatchKey = tuple[tuple[int, bytes], ...]

_FIELD_OF_KIND = {
    MatchKind.EXACT: "exact",
    MatchKind.LPM: "lpm",
    MatchKind.TERNARY: "ternary",
    MatchKind.RANGE: "range",
    MatchKind.OPTIONAL: "optional",
}


def canonical_match(
    table: TableInfo, match: list[p4runtime_pb2.FieldMatch]
) -> list[p4runtime_pb2.FieldMatch]:
    """Check a match list against the table (INVALID_ARGUMENT) and return it canonical,
    sorted by field id, byte strings in their shortest form."""
    out: dict[int, p4runtime_pb2.FieldMatch] = {}
    for fm in match:
        info = table.fields_by_id.get(fm.field_id)
        if info is None:
            raise invalid(f"table '{table.name}': unknown match field id {fm.field_id}")
        if fm.field_id in out:
            raise invalid(f"table '{table.name}': match field '{info.name}' given twice")
        given = fm.WhichOneof("field_match_type")
        expected = _FIELD_OF_KIND[info.kind]
        if given != expected:
            raise invalid(
                f"table '{table.name}': match field '{info.name}' is {expected}, got {given}"
            )
        out[fm.field_id] = _canonical_field(table, info, fm)
    for info in table.match_fields:
        if info.kind is MatchKind.EXACT and info.id not in out:
            raise invalid(f"table '{table.name}': exact match field '{info.name}' is missing")
    return [out[k] for k in sorted(out)]


def _canonical_field(
    table: TableInfo, info: MatchFieldInfo, fm: p4runtime_pb2.FieldMatch
) -> p4runtime_pb2.FieldMatch:
    what = f"table '{table.name}' field '{info.name}'"
    w = info.bitwidth
    out = p4runtime_pb2.FieldMatch(field_id=fm.field_id)
    if info.kind is MatchKind.EXACT:
        out.exact.value = bytestrings.encode(bytestrings.decode(fm.exact.value, w, what))
    elif info.kind is MatchKind.OPTIONAL:
        out.optional.value = bytestrings.encode(bytestrings.decode(fm.optional.value, w, what))
    elif info.kind is MatchKind.LPM:
        value = bytestrings.decode(fm.lpm.value, w, what)
        plen = fm.lpm.prefix_len
        if plen <= 0 or plen > w:
            raise invalid(
                f"{what}: prefix length {plen} not in 1..{w} (omit the field for don't care)"
            )
        if value & ((1 << (w - plen)) - 1):
            raise invalid(f"{what}: value has bits set beyond the /{plen} prefix")
        out.lpm.value = bytestrings.encode(value)
        out.lpm.prefix_len = plen
    elif info.kind is MatchKind.TERNARY:
        value = bytestrings.decode(fm.ternary.value, w, what)
        mask = bytestrings.decode(fm.ternary.mask, w, what + " mask")
        if mask == 0:
            raise invalid(f"{what}: mask is 0 (omit the field for don't care)")
        if value & ~mask:
            raise invalid(f"{what}: value has bits set outside the mask")
        out.ternary.value = bytestrings.encode(value)
        out.ternary.mask = bytestrings.encode(mask)
    elif info.kind is MatchKind.RANGE:
        low = bytestrings.decode(fm.range.low, w, what + " low")
        high = bytestrings.decode(fm.range.high, w, what + " high")
        if low > high:
            raise invalid(f"{what}: range low {low} > high {high}")
        if low == 0 and high == (1 << w) - 1:
            raise invalid(f"{what}: full range (omit the field for don't care)")
        out.range.low = bytestrings.encode(low)
        out.range.high = bytestrings.encode(high)
    return out


def match_key(match: list[p4runtime_pb2.FieldMatch]) -> MatchKey:
    """A hashable key of a canonical match list."""
    return tuple((fm.field_id, fm.SerializeToString(deterministic=True)) for fm in match)


def dataplane_key(table: TableInfo, match: list[p4runtime_pb2.FieldMatch]) -> list[MatchParam]:
    """The data-plane key of a canonical match list: every field in key order,
    with don't-care fields filled in."""
    given = {fm.field_id: fm for fm in match}
    key = []
    for info in table.match_fields:
        fm = given.get(info.id)
        k = info.kind
        full = (1 << info.bitwidth) - 1
        if k is MatchKind.EXACT:
            key.append(MatchParam(k, value=_int(fm.exact.value)))
        elif k is MatchKind.OPTIONAL:
            if fm is None:
                key.append(MatchParam(k, wildcard=True))
            else:
                key.append(MatchParam(k, value=_int(fm.optional.value)))
        elif k is MatchKind.LPM:
            if fm is None:
                key.append(MatchParam(k, value=0, prefix_len=0))
            else:
                key.append(MatchParam(k, value=_int(fm.lpm.value), prefix_len=fm.lpm.prefix_len))
        elif k is MatchKind.TERNARY:
            if fm is None:
                key.append(MatchParam(k, value=0, mask=0))
            else:
                key.append(MatchParam(k, value=_int(fm.ternary.value), mask=_int(fm.ternary.mask)))
        elif k is MatchKind.RANGE:
            if fm is None:
                key.append(MatchParam(k, value=0, high=full))
            else:
                key.append(MatchParam(k, value=_int(fm.range.low), high=_int(fm.range.high)))
    return key


def _int(data: bytes) -> int:
    return int.from_bytes(data, "big")


def canonical_action(
    info: PipelineInfo, action: p4runtime_pb2.Action, what: str,
    allowed: dict[int, int] | None = None, as_default: bool = False,
) -> tuple[p4runtime_pb2.Action, ActionCall]:
    """Check an Action (INVALID_ARGUMENT, or PERMISSION_DENIED for a scope
    violation) and return its canonical protobuf and the data-plane call.

    `allowed` maps the action ids permitted here to their P4Info scope.
    """
    ainfo: ActionInfo | None = info.actions.get(action.action_id)
    if ainfo is None:
        raise invalid(f"{what}: unknown action id {action.action_id}")
    if allowed is not None:
        scope = allowed.get(action.action_id)
        if scope is None:
            raise invalid(f"{what}: action '{ainfo.name}' is not an action of this table")
        if as_default and scope == p4info_pb2.ActionRef.TABLE_ONLY:
            raise permission_denied(f"{what}: action '{ainfo.name}' is @tableonly")
        if not as_default and scope == p4info_pb2.ActionRef.DEFAULT_ONLY:
            raise permission_denied(f"{what}: action '{ainfo.name}' is @defaultonly")
    values: dict[int, int] = {}
    for p in action.params:
        pinfo = ainfo.params_by_id.get(p.param_id)
        if pinfo is None:
            raise invalid(f"{what}: action '{ainfo.name}' has no parameter id {p.param_id}")
        if p.param_id in values:
            raise invalid(f"{what}: parameter '{pinfo.name}' given twice")
        values[p.param_id] = bytestrings.decode(
            p.value, pinfo.bitwidth, f"{what} action '{ainfo.name}' parameter '{pinfo.name}'"
        )
    missing = [p.name for p in ainfo.params if p.id not in values]
    if missing:
        raise invalid(f"{what}: action '{ainfo.name}' is missing parameter(s) {', '.join(missing)}")
    out = p4runtime_pb2.Action(action_id=ainfo.id)
    for p in ainfo.params:
        out.params.add(param_id=p.id, value=bytestrings.encode(values[p.id]))
    return out, ActionCall(ainfo.name, tuple(values[p.id] for p in ainfo.params))


def action_call(info: PipelineInfo, action: p4runtime_pb2.Action) -> ActionCall:
    """The data-plane call of an already canonical Action."""
    ainfo = info.actions[action.action_id]
    return ActionCall(ainfo.name, tuple(_int(p.value) for p in action.params))
