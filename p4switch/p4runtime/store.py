"""What the server holds for one loaded pipeline, and Write/Read on it.

Every written entity is kept as its canonical protobuf (to answer Reads with
read-write symmetry) next to what the data plane needs (handles). Each write
returns an undo closure so a batch can be rolled back (ROLLBACK_ON_ERROR).
Counter, register and meter cells live in the data plane and are read from it.
The caller serializes all calls (one lock in the servicer).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from google.rpc import code_pb2
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from ..runtime_api import Dataplane, DataplaneError, IndirectTarget, Replica
from . import bytestrings
from .errors import (
    P4RuntimeError,
    already_exists,
    failed_precondition,
    invalid,
    not_found,
    out_of_range,
    permission_denied,
    resource_exhausted,
    unimplemented,
)
from .p4info import PipelineInfo, TableInfo
from .translate import (
    MatchKey,
    action_call,
    canonical_action,
    canonical_match,
    dataplane_key,
    match_key,
)

Undo = Callable[[], None]
INSERT, MODIFY, DELETE = (
    p4runtime_pb2.Update.INSERT,
    p4runtime_pb2.Update.MODIFY,
    p4runtime_pb2.Update.DELETE,
)


def _noop() -> None:
    pass


@dataclass
class TableRecord:
    entry: p4runtime_pb2.TableEntry  # canonical, without direct resource data
    handle: int | None  # None for entries the program installed itself (const entries)
    meter_config: p4runtime_pb2.MeterConfig | None = None


@dataclass
class TableState:
    entries: dict[tuple[MatchKey, int], TableRecord] = field(default_factory=dict)
    default_action: p4runtime_pb2.TableAction | None = None  # None: the program's default
    default_entry_extra: p4runtime_pb2.TableEntry | None = None  # cookies of the default entry


def _dp(call: Callable, *args):
    """Call the data plane; its refusals become INTERNAL with its message."""
    try:
        return call(*args)
    except DataplaneError as e:
        raise P4RuntimeError(code_pb2.INTERNAL, f"data plane: {e}") from e


class PipelineState:
    def __init__(self, info: PipelineInfo, dataplane: Dataplane):
        self.info = info
        self.dp = dataplane
        self.tables: dict[int, TableState] = {tid: TableState() for tid in info.tables}
        self.members: dict[tuple[int, int], p4runtime_pb2.ActionProfileMember] = {}
        self.groups: dict[tuple[int, int], p4runtime_pb2.ActionProfileGroup] = {}
        self.meter_configs: dict[tuple[int, int], p4runtime_pb2.MeterConfig] = {}
        self.mc_groups: dict[int, p4runtime_pb2.MulticastGroupEntry] = {}
        self.clone_sessions: dict[int, p4runtime_pb2.CloneSessionEntry] = {}
        self.digest_configs: dict[int, p4runtime_pb2.DigestEntry] = {}
        # use counts of members/groups by table entries: ("m"|"g", profile id, id) -> n
        self._refs: dict[tuple[str, int, int], int] = {}
        self.on_digest_config: Callable[[int, p4runtime_pb2.DigestEntry | None], None] = (
            lambda digest_id, entry: None
        )
        self._load_const_entries()

    # ==========================================================================
    # Write
    # ==========================================================================
    def write(self, update: p4runtime_pb2.Update) -> Undo:
        kind = update.type
        if kind not in (INSERT, MODIFY, DELETE):
            raise invalid("update type is UNSPECIFIED")
        entity = update.entity
        which = entity.WhichOneof("entity")
        if which == "table_entry":
            return self._write_table_entry(kind, entity.table_entry)
        if which == "action_profile_member":
            return self._write_member(kind, entity.action_profile_member)
        if which == "action_profile_group":
            return self._write_group(kind, entity.action_profile_group)
        if which == "counter_entry":
            return self._write_counter(kind, entity.counter_entry)
        if which == "direct_counter_entry":
            return self._write_direct_counter(kind, entity.direct_counter_entry)
        if which == "meter_entry":
            return self._write_meter(kind, entity.meter_entry)
        if which == "direct_meter_entry":
            return self._write_direct_meter(kind, entity.direct_meter_entry)
        if which == "register_entry":
            return self._write_register(kind, entity.register_entry)
        if which == "packet_replication_engine_entry":
            pre = entity.packet_replication_engine_entry
            if pre.HasField("multicast_group_entry"):
                return self._write_mc_group(kind, pre.multicast_group_entry)
            if pre.HasField("clone_session_entry"):
                return self._write_clone_session(kind, pre.clone_session_entry)
            raise invalid("empty PacketReplicationEngineEntry")
        if which == "digest_entry":
            return self._write_digest(kind, entity.digest_entry)
        if which is None:
            raise invalid("update without an entity")
        raise unimplemented(f"{which} is not supported")

    # tables -------------------------------------------------------------------
    def _table(self, table_id: int) -> TableInfo:
        t = self.info.tables.get(table_id)
        if t is None:
            raise not_found(f"unknown table id {table_id}")
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
                raise not_found(f"{what}: member {mid} not in action profile '{prof.name}'")
            return p4runtime_pb2.TableAction(action_profile_member_id=mid), IndirectTarget(member=mid)
        if which == "action_profile_group_id":
            if not prof.with_selector:
                raise invalid(f"{what}: action profile '{prof.name}' has no selector, no groups")
            gid = action.action_profile_group_id
            if (prof.id, gid) not in self.groups:
                raise not_found(f"{what}: group {gid} not in action profile '{prof.name}'")
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
        state = self.tables[t.id]
        rec = state.entries.get(key)
        if kind == INSERT:
            if rec is not None:
                raise already_exists(f"{what}: entry already exists")
            if not te.HasField("action"):
                raise invalid(f"{what}: INSERT needs an action")
            if t.size and len(state.entries) >= t.size:
                raise resource_exhausted(f"{what} is full ({t.size} entries)")
            action, target = self._table_target(t, te.action, what)
            self._check_direct_resources(t, te)
            handle = _dp(self.dp.table_add, t.name, dataplane_key(t, match), target, te.priority)
            entry = self._stored_entry(te, match, action)
            new = TableRecord(entry, handle)
            state.entries[key] = new
            self._ref_action(t, action, +1)
            self._apply_direct_resources(t, new, te, inserting=True)
            return lambda: self._remove_entry(t, key)
        if rec is None:
            raise not_found(f"{what}: no such entry")
        if rec.handle is None:
            raise permission_denied(f"{what}: entry is const")
        if kind == DELETE:
            _dp(self.dp.table_delete, t.name, rec.handle)
            del state.entries[key]
            self._ref_action(t, rec.entry.action, -1)
            return lambda: self._restore_entry(t, key, rec)
        # MODIFY
        old = TableRecord(_copy(rec.entry), rec.handle, rec.meter_config)
        if te.HasField("action"):
            action, target = self._table_target(t, te.action, what)
            self._check_direct_resources(t, te)
            _dp(self.dp.table_modify, t.name, rec.handle, target)
            self._ref_action(t, rec.entry.action, -1)
            self._ref_action(t, action, +1)
        else:
            self._check_direct_resources(t, te)
            action = rec.entry.action
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
            _meter_rates(te.meter_config)

    def _apply_direct_resources(self, t, rec: TableRecord, te, inserting: bool) -> None:
        if te.HasField("counter_data"):
            d = te.counter_data
            _dp(self.dp.direct_counter_write, t.name, rec.handle, d.byte_count, d.packet_count)
        if t.direct_meter_id:
            if te.HasField("meter_config"):
                _dp(self.dp.direct_meter_set, t.name, rec.handle, _meter_rates(te.meter_config))
                rec.meter_config = _copy(te.meter_config)
            elif not inserting and rec.meter_config is not None:
                _dp(self.dp.direct_meter_set, t.name, rec.handle, [])
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
            self.dp.direct_meter_set(t.name, handle, _meter_rates(rec.meter_config))
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
        state = self.tables[t.id]
        old_action, old_extra = state.default_action, state.default_entry_extra
        if te.HasField("action"):
            if t.implementation_id:
                raise permission_denied(f"{what}: an indirect table's default entry is fixed")
            proto, call = canonical_action(
                self.info, te.action.action, what, t.action_scopes, as_default=True
            )
            _dp(self.dp.table_set_default, t.name, call)
            state.default_action = p4runtime_pb2.TableAction(action=proto)
            state.default_entry_extra = p4runtime_pb2.TableEntry(
                controller_metadata=te.controller_metadata, metadata=te.metadata
            )
        else:
            _dp(self.dp.table_set_default, t.name, None)
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

    # action profiles ------------------------------------------------------------
    def _profile(self, profile_id: int):
        prof = self.info.action_profiles.get(profile_id)
        if prof is None:
            raise not_found(f"unknown action profile id {profile_id}")
        return prof

    def _profile_actions(self, prof) -> dict[int, int]:
        allowed: dict[int, int] = {}
        for tid in prof.table_ids:
            t = self.info.tables.get(tid)
            if t:
                allowed.update(t.action_scopes)
        return allowed

    def _write_member(self, kind: int, m: p4runtime_pb2.ActionProfileMember) -> Undo:
        prof = self._profile(m.action_profile_id)
        what = f"action profile '{prof.name}' member {m.member_id}"
        key = (prof.id, m.member_id)
        old = self.members.get(key)
        if kind == DELETE:
            if old is None:
                raise not_found(f"{what}: no such member")
            if self._refs.get(("m", prof.id, m.member_id)) or any(
                m.member_id in (x.member_id for x in g.members)
                for (pid, _), g in self.groups.items() if pid == prof.id
            ):
                raise failed_precondition(f"{what} is used by a group or a table entry")
            _dp(self.dp.act_prof_delete_member, prof.name, m.member_id)
            del self.members[key]
            return lambda: self._set_member(prof, old, insert=True)
        if kind == INSERT and old is not None:
            raise already_exists(f"{what} already exists")
        if kind == MODIFY and old is None:
            raise not_found(f"{what}: no such member")
        proto, call = canonical_action(
            self.info, m.action, what, self._profile_actions(prof) or None
        )
        if kind == INSERT and prof.size and len(
            [k for k in self.members if k[0] == prof.id]
        ) >= prof.size:
            raise resource_exhausted(f"action profile '{prof.name}' is full")
        stored = p4runtime_pb2.ActionProfileMember(
            action_profile_id=prof.id, member_id=m.member_id, action=proto
        )
        if kind == INSERT:
            _dp(self.dp.act_prof_add_member, prof.name, m.member_id, call)
        else:
            _dp(self.dp.act_prof_modify_member, prof.name, m.member_id, call)
        self.members[key] = stored
        if kind == INSERT:
            return lambda: self._delete_member(prof, m.member_id)
        return lambda: self._set_member(prof, old, insert=False)

    def _set_member(self, prof, m, insert: bool) -> None:
        call = action_call(self.info, m.action)
        if insert:
            self.dp.act_prof_add_member(prof.name, m.member_id, call)
        else:
            self.dp.act_prof_modify_member(prof.name, m.member_id, call)
        self.members[(prof.id, m.member_id)] = m

    def _delete_member(self, prof, member_id: int) -> None:
        self.dp.act_prof_delete_member(prof.name, member_id)
        self.members.pop((prof.id, member_id), None)

    def _write_group(self, kind: int, g: p4runtime_pb2.ActionProfileGroup) -> Undo:
        prof = self._profile(g.action_profile_id)
        what = f"action profile '{prof.name}' group {g.group_id}"
        if not prof.with_selector:
            raise invalid(f"action profile '{prof.name}' has no selector: no groups")
        key = (prof.id, g.group_id)
        old = self.groups.get(key)
        if kind == DELETE:
            if old is None:
                raise not_found(f"{what}: no such group")
            if self._refs.get(("g", prof.id, g.group_id)):
                raise failed_precondition(f"{what} is used by a table entry")
            _dp(self.dp.act_prof_delete_group, prof.name, g.group_id)
            del self.groups[key]
            return lambda: self._set_group(prof, old)
        if kind == INSERT and old is not None:
            raise already_exists(f"{what} already exists")
        if kind == MODIFY and old is None:
            raise not_found(f"{what}: no such group")
        seen: set[int] = set()
        member_ids: list[int] = []
        for mem in g.members:
            if mem.member_id in seen:
                raise invalid(f"{what}: member {mem.member_id} listed twice")
            seen.add(mem.member_id)
            if (prof.id, mem.member_id) not in self.members:
                raise not_found(f"{what}: member {mem.member_id} does not exist")
            if mem.weight < 0:
                raise invalid(f"{what}: member {mem.member_id} has negative weight")
            member_ids.extend([mem.member_id] * max(1, mem.weight))
        max_size = g.max_size if kind == INSERT else old.max_size
        if prof.max_group_size and max_size > prof.max_group_size:
            raise resource_exhausted(
                f"{what}: max_size {max_size} > the profile's {prof.max_group_size}"
            )
        if max_size and len(g.members) > max_size:
            raise resource_exhausted(f"{what}: {len(g.members)} members > max_size {max_size}")
        _dp(self.dp.act_prof_set_group, prof.name, g.group_id, member_ids)
        stored = _copy(g)
        stored.max_size = max_size
        self.groups[key] = stored
        if old is None:
            return lambda: self._delete_group(prof, g.group_id)
        return lambda: self._set_group(prof, old)

    def _set_group(self, prof, g) -> None:
        ids = [m.member_id for m in g.members for _ in range(max(1, m.weight))]
        self.dp.act_prof_set_group(prof.name, g.group_id, ids)
        self.groups[(prof.id, g.group_id)] = g

    def _delete_group(self, prof, group_id: int) -> None:
        self.dp.act_prof_delete_group(prof.name, group_id)
        self.groups.pop((prof.id, group_id), None)

    # counters, meters, registers ------------------------------------------------------
    @staticmethod
    def _indices(obj, index_msg_holder, what: str) -> range:
        if not index_msg_holder.HasField("index"):
            return range(obj.size)
        i = index_msg_holder.index.index
        if i < 0 or i >= obj.size:
            raise out_of_range(f"{what} '{obj.name}': index {i} not in 0..{obj.size - 1}")
        return range(i, i + 1)

    def _write_counter(self, kind: int, c: p4runtime_pb2.CounterEntry) -> Undo:
        info = self.info.counters.get(c.counter_id)
        if info is None:
            raise not_found(f"unknown counter id {c.counter_id}")
        if kind != MODIFY:
            raise invalid(f"counter '{info.name}': only MODIFY is allowed")
        indices = self._indices(info, c, "counter")
        old = [(i, self.dp.counter_read(info.name, i)) for i in indices]
        for i in indices:
            _dp(self.dp.counter_write, info.name, i, c.data.byte_count, c.data.packet_count)

        def undo() -> None:
            for i, (b, p) in old:
                self.dp.counter_write(info.name, i, b, p)

        return undo

    def _direct_record(self, te: p4runtime_pb2.TableEntry, what: str, kind_attr: str):
        t = self._table(te.table_id)
        if not getattr(t, kind_attr):
            raise invalid(f"table '{t.name}' has no {what}")
        if te.is_default_action:
            raise unimplemented(f"{what} of a default entry is not supported")
        _, key = self._entry_key(t, te)
        rec = self.tables[t.id].entries.get(key)
        if rec is None:
            raise not_found(f"table '{t.name}': no such entry for the {what}")
        if rec.handle is None:
            raise unimplemented(f"{what} of a const entry is not supported")
        return t, rec

    def _write_direct_counter(self, kind: int, d: p4runtime_pb2.DirectCounterEntry) -> Undo:
        if kind != MODIFY:
            raise invalid("direct counter: only MODIFY is allowed")
        t, rec = self._direct_record(d.table_entry, "direct counter", "direct_counter_id")
        old = self.dp.direct_counter_read(t.name, rec.handle)
        _dp(self.dp.direct_counter_write, t.name, rec.handle, d.data.byte_count, d.data.packet_count)
        return lambda: self.dp.direct_counter_write(t.name, rec.handle, *old)

    def _write_meter(self, kind: int, m: p4runtime_pb2.MeterEntry) -> Undo:
        info = self.info.meters.get(m.meter_id)
        if info is None:
            raise not_found(f"unknown meter id {m.meter_id}")
        if kind != MODIFY:
            raise invalid(f"meter '{info.name}': only MODIFY is allowed")
        indices = self._indices(info, m, "meter")
        rates = _meter_rates(m.config) if m.HasField("config") else []
        old = {i: self.meter_configs.get((info.id, i)) for i in indices}
        for i in indices:
            _dp(self.dp.meter_set, info.name, i, rates)
            if rates:
                self.meter_configs[(info.id, i)] = _copy(m.config)
            else:
                self.meter_configs.pop((info.id, i), None)

        def undo() -> None:
            for i, cfg in old.items():
                self.dp.meter_set(info.name, i, _meter_rates(cfg) if cfg else [])
                if cfg:
                    self.meter_configs[(info.id, i)] = cfg
                else:
                    self.meter_configs.pop((info.id, i), None)

        return undo

    def _write_direct_meter(self, kind: int, d: p4runtime_pb2.DirectMeterEntry) -> Undo:
        if kind != MODIFY:
            raise invalid("direct meter: only MODIFY is allowed")
        t, rec = self._direct_record(d.table_entry, "direct meter", "direct_meter_id")
        rates = _meter_rates(d.config) if d.HasField("config") else []
        old = rec.meter_config
        _dp(self.dp.direct_meter_set, t.name, rec.handle, rates)
        rec.meter_config = _copy(d.config) if rates else None

        def undo() -> None:
            self.dp.direct_meter_set(t.name, rec.handle, _meter_rates(old) if old else [])
            rec.meter_config = old

        return undo

    @staticmethod
    def _write_register(kind: int, r: p4runtime_pb2.RegisterEntry) -> Undo:
        """Refused as bmv2's simple_switch_grpc refuses it, so that a controller that
        works here works there: registers are the data plane's own state; run-time
        configuration goes in tables (docs/p4runtime.md)."""
        raise unimplemented("Register writes are not supported yet")

    # packet replication engine ------------------------------------------------------
    @staticmethod
    def _replicas(replicas, what: str) -> list[Replica]:
        out, seen = [], set()
        for r in replicas:
            which = r.WhichOneof("port_kind")
            if which == "port":
                port = bytestrings.decode(r.port, 32, f"{what} replica port")
            else:
                port = r.egress_port
            if (port, r.instance) in seen:
                raise invalid(f"{what}: replica (port {port}, instance {r.instance}) listed twice")
            seen.add((port, r.instance))
            out.append(Replica(port, r.instance))
        return out

    def _write_mc_group(self, kind: int, g: p4runtime_pb2.MulticastGroupEntry) -> Undo:
        what = f"multicast group {g.multicast_group_id}"
        if g.multicast_group_id == 0:
            raise invalid("multicast group id 0 is reserved")
        old = self.mc_groups.get(g.multicast_group_id)
        if kind == INSERT and old is not None:
            raise already_exists(f"{what} already exists")
        if kind in (MODIFY, DELETE) and old is None:
            raise not_found(f"{what}: no such group")
        if kind == DELETE:
            _dp(self.dp.mc_group_delete, g.multicast_group_id)
            del self.mc_groups[g.multicast_group_id]
            return lambda: self._set_mc(old)
        _dp(self.dp.mc_group_set, g.multicast_group_id, self._replicas(g.replicas, what))
        self.mc_groups[g.multicast_group_id] = _copy(g)
        if old is None:
            return lambda: self._delete_mc(g.multicast_group_id)
        return lambda: self._set_mc(old)

    def _delete_mc(self, group_id: int) -> None:
        self.dp.mc_group_delete(group_id)
        self.mc_groups.pop(group_id, None)

    def _set_mc(self, g) -> None:
        self.dp.mc_group_set(g.multicast_group_id, self._replicas(g.replicas, ""))
        self.mc_groups[g.multicast_group_id] = g

    def _write_clone_session(self, kind: int, s: p4runtime_pb2.CloneSessionEntry) -> Undo:
        what = f"clone session {s.session_id}"
        if s.session_id == 0:
            raise invalid("clone session id 0 is reserved")
        if s.packet_length_bytes < 0:
            raise invalid(f"{what}: negative packet_length_bytes")
        old = self.clone_sessions.get(s.session_id)
        if kind == INSERT and old is not None:
            raise already_exists(f"{what} already exists")
        if kind in (MODIFY, DELETE) and old is None:
            raise not_found(f"{what}: no such session")
        if kind == DELETE:
            _dp(self.dp.clone_session_delete, s.session_id)
            del self.clone_sessions[s.session_id]
            return lambda: self._set_clone(old)
        self._set_clone(s, checked=True)
        if old is None:
            return lambda: self._delete_clone(s.session_id)
        return lambda: self._set_clone(old)

    def _delete_clone(self, session_id: int) -> None:
        self.dp.clone_session_delete(session_id)
        self.clone_sessions.pop(session_id, None)

    def _set_clone(self, s, checked: bool = False) -> None:
        replicas = self._replicas(s.replicas, f"clone session {s.session_id}")
        call = _dp if checked else (lambda f, *a: f(*a))
        call(self.dp.clone_session_set, s.session_id, replicas, s.class_of_service,
             s.packet_length_bytes)
        self.clone_sessions[s.session_id] = _copy(s)

    # digests ----------------------------------------------------------------------------
    def _write_digest(self, kind: int, d: p4runtime_pb2.DigestEntry) -> Undo:
        info = self.info.digests.get(d.digest_id)
        if info is None:
            raise not_found(f"unknown digest id {d.digest_id}")
        what = f"digest '{info.name}'"
        old = self.digest_configs.get(d.digest_id)
        if kind == INSERT and old is not None:
            raise already_exists(f"{what} is already configured")
        if kind in (MODIFY, DELETE) and old is None:
            raise not_found(f"{what} is not configured")
        if kind == DELETE:
            del self.digest_configs[d.digest_id]
            self.on_digest_config(d.digest_id, None)
        else:
            if not d.HasField("config"):
                raise invalid(f"{what}: config is required")
            c = d.config
            if c.max_timeout_ns < 0 or c.max_list_size < 0 or c.ack_timeout_ns < 0:
                raise invalid(f"{what}: negative value in config")
            self.digest_configs[d.digest_id] = _copy(d)
            self.on_digest_config(d.digest_id, self.digest_configs[d.digest_id])

        def undo() -> None:
            if old is None:
                self.digest_configs.pop(d.digest_id, None)
            else:
                self.digest_configs[d.digest_id] = old
            self.on_digest_config(d.digest_id, old)

        return undo

    # ==========================================================================
    # Read
    # ==========================================================================
    def read(self, entity: p4runtime_pb2.Entity) -> Iterator[p4runtime_pb2.Entity]:
        which = entity.WhichOneof("entity")
        if which == "table_entry":
            for te in self._read_table_entries(entity.table_entry):
                yield p4runtime_pb2.Entity(table_entry=te)
        elif which == "action_profile_member":
            m = entity.action_profile_member
            for key, stored in sorted(self.members.items()):
                if self._profile_match(m.action_profile_id, key[0]) and (
                    not m.member_id or m.member_id == key[1]
                ):
                    yield p4runtime_pb2.Entity(action_profile_member=stored)
        elif which == "action_profile_group":
            g = entity.action_profile_group
            for key, stored in sorted(self.groups.items()):
                if self._profile_match(g.action_profile_id, key[0]) and (
                    not g.group_id or g.group_id == key[1]
                ):
                    yield p4runtime_pb2.Entity(action_profile_group=stored)
        elif which == "counter_entry":
            yield from self._read_counters(entity.counter_entry)
        elif which == "direct_counter_entry":
            yield from self._read_direct(entity.direct_counter_entry, counter=True)
        elif which == "meter_entry":
            yield from self._read_meters(entity.meter_entry)
        elif which == "direct_meter_entry":
            yield from self._read_direct(entity.direct_meter_entry, counter=False)
        elif which == "register_entry":
            yield from self._read_registers(entity.register_entry)
        elif which == "packet_replication_engine_entry":
            pre = entity.packet_replication_engine_entry
            if pre.HasField("multicast_group_entry"):
                gid = pre.multicast_group_entry.multicast_group_id
                for k in sorted(self.mc_groups):
                    if not gid or gid == k:
                        yield p4runtime_pb2.Entity(
                            packet_replication_engine_entry=p4runtime_pb2.PacketReplicationEngineEntry(
                                multicast_group_entry=self.mc_groups[k]))
            elif pre.HasField("clone_session_entry"):
                sid = pre.clone_session_entry.session_id
                for k in sorted(self.clone_sessions):
                    if not sid or sid == k:
                        yield p4runtime_pb2.Entity(
                            packet_replication_engine_entry=p4runtime_pb2.PacketReplicationEngineEntry(
                                clone_session_entry=self.clone_sessions[k]))
            else:
                raise invalid("empty PacketReplicationEngineEntry")
        elif which == "digest_entry":
            did = entity.digest_entry.digest_id
            if did and did not in self.info.digests:
                raise not_found(f"unknown digest id {did}")
            for k in sorted(self.digest_configs):
                if not did or did == k:
                    yield p4runtime_pb2.Entity(digest_entry=self.digest_configs[k])
        elif which is None:
            raise invalid("read of an empty entity")
        else:
            raise unimplemented(f"{which} is not supported")

    def _profile_match(self, wanted: int, profile_id: int) -> bool:
        if wanted and wanted not in self.info.action_profiles:
            raise not_found(f"unknown action profile id {wanted}")
        return not wanted or wanted == profile_id

    def _selected_tables(self, table_id: int) -> list[TableInfo]:
        if table_id == 0:
            return [self.info.tables[i] for i in sorted(self.info.tables)]
        return [self._table(table_id)]

    def _read_table_entries(self, q: p4runtime_pb2.TableEntry) -> Iterator[p4runtime_pb2.TableEntry]:
        for t in self._selected_tables(q.table_id):
            state = self.tables[t.id]
            if q.is_default_action:
                yield self._default_entry(t, state)
                continue
            if len(q.match):
                _, key = self._entry_key(t, q)
                rec = state.entries.get(key)
                records = [rec] if rec is not None else []
            else:
                records = list(state.entries.values())
            for rec in records:
                e = rec.entry
                if q.priority and e.priority != q.priority:
                    continue
                if q.controller_metadata and e.controller_metadata != q.controller_metadata:
                    continue
                if q.metadata and e.metadata != q.metadata:
                    continue
                if (q.HasField("action") and q.action.HasField("action")
                        and e.action.action.action_id != q.action.action.action_id):
                    continue
                out = _copy(e)
                if q.HasField("counter_data") and t.direct_counter_id and rec.handle is not None:
                    b, p = self.dp.direct_counter_read(t.name, rec.handle)
                    self._fill_counter(out.counter_data, self.info.direct_counters[t.direct_counter_id].unit, b, p)
                if q.HasField("meter_config") and rec.meter_config is not None:
                    out.meter_config.CopyFrom(rec.meter_config)
                yield out

    def _default_entry(self, t: TableInfo, state: TableState) -> p4runtime_pb2.TableEntry:
        e = p4runtime_pb2.TableEntry(table_id=t.id, is_default_action=True)
        action = state.default_action or self._initial_default_action(t)
        if action is not None:
            e.action.CopyFrom(action)
        if state.default_entry_extra is not None:
            e.controller_metadata = state.default_entry_extra.controller_metadata
            e.metadata = state.default_entry_extra.metadata
        return e

    @staticmethod
    def _fill_counter(data: p4runtime_pb2.CounterData, unit: int, nbytes: int, packets: int) -> None:
        if unit in (p4info_pb2.CounterSpec.BYTES, p4info_pb2.CounterSpec.BOTH):
            data.byte_count = nbytes
        if unit in (p4info_pb2.CounterSpec.PACKETS, p4info_pb2.CounterSpec.BOTH):
            data.packet_count = packets

    def _read_counters(self, q: p4runtime_pb2.CounterEntry) -> Iterator[p4runtime_pb2.Entity]:
        if q.counter_id and q.counter_id not in self.info.counters:
            raise not_found(f"unknown counter id {q.counter_id}")
        for cid in sorted(self.info.counters):
            if q.counter_id and cid != q.counter_id:
                continue
            info = self.info.counters[cid]
            for i in self._indices(info, q, "counter"):
                b, p = self.dp.counter_read(info.name, i)
                out = p4runtime_pb2.CounterEntry(counter_id=cid)
                out.index.index = i
                self._fill_counter(out.data, info.unit, b, p)
                yield p4runtime_pb2.Entity(counter_entry=out)

    def _read_direct(self, q, counter: bool) -> Iterator[p4runtime_pb2.Entity]:
        te = q.table_entry
        attr = "direct_counter_id" if counter else "direct_meter_id"
        for t in self._selected_tables(te.table_id):
            if not getattr(t, attr):
                if te.table_id:
                    raise invalid(f"table '{t.name}' has no direct {'counter' if counter else 'meter'}")
                continue
            sub = p4runtime_pb2.TableEntry(table_id=t.id, priority=te.priority)
            sub.match.extend(te.match)
            for rec in self._records(t, sub):
                if rec.handle is None:
                    continue
                if counter:
                    out = p4runtime_pb2.DirectCounterEntry()
                    out.table_entry.CopyFrom(rec.entry)
                    b, p = self.dp.direct_counter_read(t.name, rec.handle)
                    self._fill_counter(out.data, self.info.direct_counters[t.direct_counter_id].unit, b, p)
                    yield p4runtime_pb2.Entity(direct_counter_entry=out)
                else:
                    out = p4runtime_pb2.DirectMeterEntry()
                    out.table_entry.CopyFrom(rec.entry)
                    if rec.meter_config is not None:
                        out.config.CopyFrom(rec.meter_config)
                    yield p4runtime_pb2.Entity(direct_meter_entry=out)

    def _records(self, t: TableInfo, q: p4runtime_pb2.TableEntry) -> list[TableRecord]:
        state = self.tables[t.id]
        if len(q.match):
            _, key = self._entry_key(t, q)
            rec = state.entries.get(key)
            return [rec] if rec else []
        return [r for r in state.entries.values() if not q.priority or r.entry.priority == q.priority]

    def _read_meters(self, q: p4runtime_pb2.MeterEntry) -> Iterator[p4runtime_pb2.Entity]:
        if q.meter_id and q.meter_id not in self.info.meters:
            raise not_found(f"unknown meter id {q.meter_id}")
        for mid in sorted(self.info.meters):
            if q.meter_id and mid != q.meter_id:
                continue
            info = self.info.meters[mid]
            for i in self._indices(info, q, "meter"):
                out = p4runtime_pb2.MeterEntry(meter_id=mid)
                out.index.index = i
                cfg = self.meter_configs.get((mid, i))
                if cfg is not None:
                    out.config.CopyFrom(cfg)
                yield p4runtime_pb2.Entity(meter_entry=out)

    def _read_registers(self, q: p4runtime_pb2.RegisterEntry) -> Iterator[p4runtime_pb2.Entity]:
        if q.register_id and q.register_id not in self.info.registers:
            raise not_found(f"unknown register id {q.register_id}")
        for rid in sorted(self.info.registers):
            if q.register_id and rid != q.register_id:
                continue
            info = self.info.registers[rid]
            for i in self._indices(info, q, "register"):
                out = p4runtime_pb2.RegisterEntry(register_id=rid)
                out.index.index = i
                out.data.bitstring = bytestrings.encode(self.dp.register_read(info.name, i))
                yield p4runtime_pb2.Entity(register_entry=out)

    # ==========================================================================
    # Reconcile (RECONCILE_AND_COMMIT)
    # ==========================================================================
    def replay_into(self, new: PipelineState) -> None:
        """Re-install this state's entities into `new` (same ids); entities the new
        pipeline refuses are dropped."""
        updates: list[p4runtime_pb2.Entity] = []
        for s in self.digest_configs.values():
            updates.append(p4runtime_pb2.Entity(digest_entry=s))
        for g in self.mc_groups.values():
            updates.append(p4runtime_pb2.Entity(packet_replication_engine_entry=(
                p4runtime_pb2.PacketReplicationEngineEntry(multicast_group_entry=g))))
        for s in self.clone_sessions.values():
            updates.append(p4runtime_pb2.Entity(packet_replication_engine_entry=(
                p4runtime_pb2.PacketReplicationEngineEntry(clone_session_entry=s))))
        updates += [p4runtime_pb2.Entity(action_profile_member=m) for m in self.members.values()]
        updates += [p4runtime_pb2.Entity(action_profile_group=g) for g in self.groups.values()]
        for tid, state in self.tables.items():
            for rec in state.entries.values():
                if rec.handle is None:
                    continue
                e = _copy(rec.entry)
                if rec.meter_config is not None:
                    e.meter_config.CopyFrom(rec.meter_config)
                updates.append(p4runtime_pb2.Entity(table_entry=e))
            if state.default_action is not None:
                e = p4runtime_pb2.TableEntry(table_id=tid, is_default_action=True)
                e.action.CopyFrom(state.default_action)
                updates.append(p4runtime_pb2.Entity(table_entry=e))
        for (mid, i), cfg in self.meter_configs.items():
            m = p4runtime_pb2.MeterEntry(meter_id=mid, config=cfg)
            m.index.index = i
            updates.append(p4runtime_pb2.Entity(meter_entry=m))
        for entity in updates:
            is_default = entity.HasField("table_entry") and entity.table_entry.is_default_action
            kind = MODIFY if is_default or entity.HasField("meter_entry") else INSERT
            try:
                new.write(p4runtime_pb2.Update(type=kind, entity=entity))
            except P4RuntimeError:
                pass


def _meter_rates(cfg: p4runtime_pb2.MeterConfig) -> list[tuple[float, int]]:
    """MeterConfig (units per second) -> data-plane rates (units per microsecond)."""
    if min(cfg.cir, cfg.cburst, cfg.pir, cfg.pburst) < 0:
        raise invalid("meter config: negative rate or burst")
    if cfg.pir < cfg.cir:
        raise invalid(f"meter config: pir {cfg.pir} < cir {cfg.cir}")
    return [(cfg.cir / 1e6, cfg.cburst), (cfg.pir / 1e6, cfg.pburst)]


def _copy(msg):
    out = type(msg)()
    out.CopyFrom(msg)
    return out
