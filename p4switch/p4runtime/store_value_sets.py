"""Parser value sets (P4Runtime ValueSetEntry), read and written.

P4Runtime spec, ValueSetEntry: the entity holds every member of one set and only
MODIFY is allowed, replacing the whole set (INSERT and DELETE are INVALID_ARGUMENT);
more members than the set's size is RESOURCE_EXHAUSTED. Each member gives one
FieldMatch per match field of the set's P4Info, exact here (this compiler declares
every value-set field EXACT, as p4c does without @match). A read with
value_set_id 0 returns every set.

A mixin of store.PipelineState: `self.value_sets` maps set id -> its members as
written (canonical byte strings)."""

from __future__ import annotations

from collections.abc import Iterator

from p4.v1 import p4runtime_pb2

from . import bytestrings
from .errors import invalid, not_found, resource_exhausted
from .p4info import ValueSetInfo
from .store_common import MODIFY, Undo, copy_msg, dp_call


class ValueSetWrites:
    def _value_set_info(self, set_id: int) -> ValueSetInfo:
        info = self.info.value_sets.get(set_id)
        if info is None:
            raise not_found(f"unknown value set id {set_id}")
        return info

    def _member_value(self, vs: ValueSetInfo, member: p4runtime_pb2.ValueSetMember,
                      n: int) -> tuple[int, p4runtime_pb2.ValueSetMember]:
        """The member as the data plane takes it (the fields concatenated, first field
        most significant) and its canonical form."""
        given = {fm.field_id: fm for fm in member.match}
        if len(given) != len(member.match):
            raise invalid(f"value set '{vs.name}' member {n}: a field id is given twice")
        canonical = p4runtime_pb2.ValueSetMember()
        value = 0
        for fid, width in enumerate(vs.widths, 1):
            fm = given.pop(fid, None)
            if fm is None:
                raise invalid(f"value set '{vs.name}' member {n}: field {fid} is missing")
            if fm.WhichOneof("field_match_type") != "exact":
                raise invalid(f"value set '{vs.name}' member {n}: field {fid} must be an "
                              "exact match")
            v = bytestrings.decode(fm.exact.value, width,
                                   f"value set '{vs.name}' member {n} field {fid}")
            value = (value << width) | v
            out = canonical.match.add()
            out.field_id = fid
            out.exact.value = bytestrings.encode(v)
        if given:
            raise invalid(f"value set '{vs.name}' member {n}: unknown field id "
                          f"{min(given)}")
        return value, canonical

    def _write_value_set(self, kind: int, e: p4runtime_pb2.ValueSetEntry) -> Undo:
        if kind != MODIFY:
            raise invalid("a ValueSetEntry can only be modified (it replaces the whole set)")
        vs = self._value_set_info(e.value_set_id)
        if vs.size and len(e.members) > vs.size:
            raise resource_exhausted(f"value set '{vs.name}' holds {vs.size} values, "
                                     f"{len(e.members)} given")
        members = [self._member_value(vs, m, n) for n, m in enumerate(e.members, 1)]
        before = self.value_sets.get(vs.id, [])
        self._install_value_set(vs, [v for v, _ in members])
        self.value_sets[vs.id] = [m for _, m in members]

        def undo() -> None:
            old = [self._member_value(vs, m, n)[0] for n, m in enumerate(before, 1)]
            self._install_value_set(vs, old)
            self.value_sets[vs.id] = before
        return undo

    def _install_value_set(self, vs: ValueSetInfo, values: list[int]) -> None:
        dp_call(self.dp.value_set_clear, vs.name)
        for v in values:
            dp_call(self.dp.value_set_add, vs.name, v)

    def _read_value_sets(self, q: p4runtime_pb2.ValueSetEntry
                         ) -> Iterator[p4runtime_pb2.Entity]:
        ids = sorted(self.info.value_sets) if q.value_set_id == 0 else [
            self._value_set_info(q.value_set_id).id]
        for i in ids:
            out = p4runtime_pb2.ValueSetEntry(value_set_id=i)
            for m in self.value_sets.get(i, []):
                out.members.add().CopyFrom(copy_msg(m))
            yield p4runtime_pb2.Entity(value_set_entry=out)
