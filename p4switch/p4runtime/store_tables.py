"""Table entries and default actions: write, const entries, direct resources.

A mixin of store.PipelineState (p4switch/p4runtime/store.py): the state it reads and
writes is PipelineState's."""

from __future__ import annotations

from p4.v1 import p4runtime_pb2

from ..runtime_api import IndirectTarget
from . import bytestrings
from .errors import (
    P4RuntimeError,
    already_exists,
    invalid,
    not_found,
    permission_denied,
    resource_exhausted,
    unimplemented,
)
from .p4info import TableInfo
from .store_common import (
    DELETE,
    INSERT,
    MODIFY,
    TableRecord,
    Undo,
    copy_msg,
    dp_call,
    meter_rates,
)
from .translate import (
    action_call,
    canonical_action,
    canonical_match,
    dataplane_key,
    match_key,
)


class TableWrites:
    # tables -------------------------------------------------------------------
    def _table(self, table_id: int) -> TableInfo:
        t = self.info.tables.get(table_id)
        if t is None:
            raise invalid(f"unknown table id {table_id}")
        return t

    def _entry_key(self, t: TableInfo, te: p4runtime_pb2.TableEntry):
        """(canonical match, dict key) of a non-default entry; checks the priority rule."""
        match = canonical_match(t, list(te.match))
        if t.needs_priority and te.priority <= 0:
            raise invalid(f"table '{t.name}' has ternary/range/optional fields: priority must be > 0")
        if not t.needs_priority and te.priority != 0:
            raise invalid(f"table '{t.name}' has no ternary/range/optional field: priority must be 0")
        return match, (match_key(match), te.priority)

    def _table_target(self, t: TableInfo, action: p4runtime_pb2.TableAction, what: str):
        """Canonical TableAction and the data-plane target for a table entry."""
        which = action.WhichOneof("type")
        if t.implementation_id == 0:
            if which != "action":
                raise invalid(f"{what}: table '{t.name}' is direct, needs an action")
            proto, call = canonical_action(self.info, action.action, what, t.action_scopes)
            return p4runtime_pb2.TableAction(action=proto), call
        prof = self.info.action_profiles[t.implementation_id]
        if which == "action_profile_member_id":
            mid = action.action_profile_member_id
            if (prof.id, mid) not in self.members:
                raise invalid(f"{what}: Invalid member / group id: member {mid} not in action "
                              f"profile '{prof.name}'")
            return p4runtime_pb2.TableAction(action_profile_member_id=mid), IndirectTarget(member=mid)
        if which == "action_profile_group_id":
            if not prof.with_selector:
                raise invalid(f"{what}: action profile '{prof.name}' has no selector, no groups")
            gid = action.action_profile_group_id
            if (prof.id, gid) not in self.groups:
                raise invalid(f"{what}: Invalid member / group id: group {gid} not in action "
                              f"profile '{prof.name}'")
            return p4runtime_pb2.TableAction(action_profile_group_id=gid), IndirectTarget(group=gid)
        if which == "action_profile_action_set":
            raise unimplemented(f"{what}: one-shot action selector programming is not supported")
        raise invalid(f"{what}: table '{t.name}' is indirect, needs a member or group id")

    def _write_table_entry(self, kind: int, te: p4runtime_pb2.TableEntry) -> Undo:
        t = self._table(te.table_id)
        what = f"table '{t.name}'"
        if te.is_const:
            raise invalid(f"{what}: is_const must be false in a write")
        if te.is_default_action:
            return self._write_default_entry(kind, t, te)
        if t.is_const:
            raise permission_denied(f"{what} is const: its entries cannot be written")
        if kind == INSERT and not t.match_fields:
            raise invalid(f"{what} has no key: only its default entry can be written")
        match, key = self._entry_key(t, te)
        if te.idle_timeout_ns and not t.supports_idle_timeout and kind != DELETE:
            # PI's words; the spec's INVALID_ARGUMENT for a field the table cannot honour
            raise invalid(f"{what}: idle_timeout_ns must be set to 0 for tables which do "
                          "not support idle timeout")
        state = self.tables[t.id]
        rec = state.entries.get(key)
        if kind == INSERT:
            # the whole entry is checked before the table is, as simple_switch_grpc does:
            # a malformed INSERT of an existing key is INVALID_ARGUMENT, not ALREADY_EXISTS
            if not te.HasField("action"):
                raise invalid(f"{what}: INSERT needs an action")
            action, target = self._table_target(t, te.action, what)
            self._check_direct_resources(t, te)
            if rec is not None:
                raise already_exists(f"{what}: entry already exists")
            if t.size and len(state.entries) >= t.size:
                raise resource_exhausted(f"{what} is full ({t.size} entries)")
            handle = dp_call(self.dp.table_add, t.name, dataplane_key(t, match), target, te.priority)
            entry = self._stored_entry(te, match, action)
            new = TableRecord(entry, handle)
            state.entries[key] = new
            self._ref_action(t, action, +1)
            self._apply_direct_resources(t, new, te, inserting=True)
            return lambda: self._remove_entry(t, key)
        if kind == MODIFY:  # the entry is checked before the key is looked up, as for INSERT
            if not te.HasField("action"):  # simple_switch_grpc's words
                raise invalid(f"{what}: 'action' field must be set for non-default entries")
            self._table_target(t, te.action, what)
        if rec is None:
            raise not_found(f"{what}: no such entry")
        if rec.handle is None:
            raise permission_denied(f"{what}: entry is const")
        if kind == DELETE:
            dp_call(self.dp.table_delete, t.name, rec.handle)
            del state.entries[key]
            self._ref_action(t, rec.entry.action, -1)
            return lambda: self._restore_entry(t, key, rec)
        # MODIFY
        old = TableRecord(copy_msg(rec.entry), rec.handle, rec.meter_config)
        action, target = self._table_target(t, te.action, what)
        self._check_direct_resources(t, te)
        dp_call(self.dp.table_modify, t.name, rec.handle, target)
        self._ref_action(t, rec.entry.action, -1)
        self._ref_action(t, action, +1)
        rec.entry = self._stored_entry(te, match, action)
        self._apply_direct_resources(t, rec, te, inserting=False)

        def undo() -> None:
            self._remove_entry(t, key)
            self._restore_entry(t, key, old)

        return undo

    @staticmethod
    def _stored_entry(te, match, action) -> p4runtime_pb2.TableEntry:
        e = p4runtime_pb2.TableEntry(
            table_id=te.table_id, priority=te.priority,
            controller_metadata=te.controller_metadata, metadata=te.metadata,
            idle_timeout_ns=te.idle_timeout_ns,
        )
        e.match.extend(match)
        e.action.CopyFrom(action)
        return e

    def _check_direct_resources(self, t: TableInfo, te: p4runtime_pb2.TableEntry) -> None:
        if te.HasField("counter_data") and not t.direct_counter_id:
            raise invalid(f"table '{t.name}' has no direct counter, counter_data given")
        if te.HasField("meter_config"):
            if not t.direct_meter_id:
                raise invalid(f"table '{t.name}' has no direct meter, meter_config given")
            meter_rates(te.meter_config)

    def _apply_direct_resources(self, t, rec: TableRecord, te, inserting: bool) -> None:
        if te.HasField("counter_data"):
            d = te.counter_data
            dp_call(self.dp.direct_counter_write, t.name, rec.handle, d.byte_count, d.packet_count)
        if t.direct_meter_id:
            if te.HasField("meter_config"):
                dp_call(self.dp.direct_meter_set, t.name, rec.handle, meter_rates(te.meter_config))
                rec.meter_config = copy_msg(te.meter_config)
            elif not inserting and rec.meter_config is not None:
                dp_call(self.dp.direct_meter_set, t.name, rec.handle, [])
                rec.meter_config = None

    def _remove_entry(self, t: TableInfo, key) -> None:
        rec = self.tables[t.id].entries.pop(key, None)
        if rec is not None:
            self.dp.table_delete(t.name, rec.handle)
            self._ref_action(t, rec.entry.action, -1)

    def _restore_entry(self, t: TableInfo, key, rec: TableRecord) -> None:
        target = self._target_of(t, rec.entry.action)
        handle = self.dp.table_add(
            t.name, dataplane_key(t, list(rec.entry.match)), target, rec.entry.priority
        )
        new = TableRecord(rec.entry, handle, rec.meter_config)
        if rec.meter_config is not None:
            self.dp.direct_meter_set(t.name, handle, meter_rates(rec.meter_config))
        self.tables[t.id].entries[key] = new
        self._ref_action(t, rec.entry.action, +1)

    def _target_of(self, t: TableInfo, action: p4runtime_pb2.TableAction):
        which = action.WhichOneof("type")
        if which == "action_profile_member_id":
            return IndirectTarget(member=action.action_profile_member_id)
        if which == "action_profile_group_id":
            return IndirectTarget(group=action.action_profile_group_id)
        return action_call(self.info, action.action)

    def _ref_action(self, t: TableInfo, action: p4runtime_pb2.TableAction, delta: int) -> None:
        """Keep the use counts that protect members and groups from deletion."""
        which = action.WhichOneof("type")
        if which == "action_profile_member_id":
            key = ("m", t.implementation_id, action.action_profile_member_id)
        elif which == "action_profile_group_id":
            key = ("g", t.implementation_id, action.action_profile_group_id)
        else:
            return
        self._refs[key] = self._refs.get(key, 0) + delta

    def _write_default_entry(self, kind: int, t: TableInfo, te) -> Undo:
        what = f"table '{t.name}' default entry"
        if len(te.match) or te.priority:
            raise invalid(f"{what}: match must be empty and priority 0")
        if kind != MODIFY:
            raise invalid(f"{what}: only MODIFY is allowed on a default entry")
        if t.const_default_action_id:
            raise permission_denied(f"{what} is const")
        if t.implementation_id:  # INVALID_ARGUMENT and these words: simple_switch_grpc's
            raise invalid(f"Cannot set / reset default action for indirect table {t.id}")
        state = self.tables[t.id]
        old_action, old_extra = state.default_action, state.default_entry_extra
        if te.HasField("action"):
            proto, call = canonical_action(
                self.info, te.action.action, what, t.action_scopes, as_default=True
            )
            dp_call(self.dp.table_set_default, t.name, call)
            state.default_action = p4runtime_pb2.TableAction(action=proto)
            state.default_entry_extra = p4runtime_pb2.TableEntry(
                controller_metadata=te.controller_metadata, metadata=te.metadata
            )
        else:
            dp_call(self.dp.table_set_default, t.name, None)
            state.default_action, state.default_entry_extra = None, None

        def undo() -> None:
            call = action_call(self.info, old_action.action) if old_action else None
            self.dp.table_set_default(t.name, call)
            state.default_action, state.default_entry_extra = old_action, old_extra

        return undo

    def _initial_default_action(self, t: TableInfo) -> p4runtime_pb2.TableAction | None:
        """The program's default action, from the bmv2 JSON table's default_entry."""
        d = self.info.json_table(t.name).get("default_entry")
        if not d:
            return None
        name = self.info.json_action_name(d.get("action_id"))
        ainfo = self.info.action_by_name(name) if name else None
        if ainfo is None:
            return None
        action = p4runtime_pb2.Action(action_id=ainfo.id)
        for p, data in zip(ainfo.params, d.get("action_data", []), strict=False):
            action.params.add(param_id=p.id, value=bytestrings.encode(int(str(data), 0)))
        return p4runtime_pb2.TableAction(action=action)

    def _load_const_entries(self) -> None:
        """Mirror the entries the program declares (bmv2 JSON 'entries') for Reads."""
        for t in self.info.tables.values():
            for je in self.info.json_table(t.name).get("entries", []):
                try:
                    entry = self._json_entry(t, je)
                except (KeyError, ValueError, TypeError, P4RuntimeError):
                    continue
                if entry is None:
                    continue
                key = (match_key(list(entry.match)), entry.priority)
                self.tables[t.id].entries[key] = TableRecord(entry, None)

    def _json_entry(self, t: TableInfo, je: dict) -> p4runtime_pb2.TableEntry | None:
        entry = p4runtime_pb2.TableEntry(table_id=t.id, is_const=True)
        for info, mk in zip(t.match_fields, je["match_key"], strict=True):
            fm = entry.match.add(field_id=info.id)
            key = int(mk["key"], 16)
            mt = mk["match_type"]
            full = (1 << info.bitwidth) - 1
            if mt == "exact":
                fm.exact.value = bytestrings.encode(key)
            elif mt == "lpm":
                if mk["prefix_length"] == 0:
                    entry.match.pop()
                    continue
                fm.lpm.value, fm.lpm.prefix_len = bytestrings.encode(key), mk["prefix_length"]
            elif mt == "ternary":
                mask = int(mk["mask"], 16)
                if mask == 0:
                    entry.match.pop()
                    continue
                fm.ternary.value, fm.ternary.mask = bytestrings.encode(key), bytestrings.encode(mask)
            elif mt == "range":
                low, high = int(mk["start"], 16), int(mk["end"], 16)
                if low == 0 and high == full:
                    entry.match.pop()
                    continue
                fm.range.low, fm.range.high = bytestrings.encode(low), bytestrings.encode(high)
            else:
                return None
        if t.needs_priority:
            entry.priority = je.get("priority", 1)
        ae = je["action_entry"]
        name = self.info.json_action_name(ae["action_id"])
        ainfo = self.info.action_by_name(name) if name else None
        if ainfo is None:
            return None
        entry.action.action.action_id = ainfo.id
        for p, data in zip(ainfo.params, ae.get("action_data", []), strict=False):
            entry.action.action.params.add(param_id=p.id, value=bytestrings.encode(int(data, 16)))
        return entry

