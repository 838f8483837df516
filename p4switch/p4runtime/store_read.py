"""Read: every entity kind, wildcards included, with read-write symmetry.

A mixin of store.PipelineState (p4switch/p4runtime/store.py): the state it reads and
writes is PipelineState's."""

from __future__ import annotations

from collections.abc import Iterator

from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from p4switch.tables import SLOT_MASK

from . import bytestrings
from .errors import (
    invalid,
    not_found,
    unimplemented,
)
from .p4info import TableInfo
from .store_common import (
    TableRecord,
    TableState,
    copy_msg,
)


class Reads:
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
            self._check_profile_id(m.action_profile_id)
            for key, stored in sorted(self.members.items()):
                if self._profile_match(m.action_profile_id, key[0]) and (
                    not m.member_id or m.member_id == key[1]
                ):
                    yield p4runtime_pb2.Entity(action_profile_member=stored)
        elif which == "action_profile_group":
            g = entity.action_profile_group
            self._check_profile_id(g.action_profile_id)
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
            yield from self._read_pre(entity.packet_replication_engine_entry)
        elif which == "digest_entry":
            did = entity.digest_entry.digest_id
            if did and did not in self.info.digests:
                raise not_found(f"unknown digest id {did}")
            for k in sorted(self.digest_configs):
                if not did or did == k:
                    yield p4runtime_pb2.Entity(digest_entry=self.digest_configs[k])
        elif which == "value_set_entry":
            yield from self._read_value_sets(entity.value_set_entry)
        elif which is None:
            raise invalid("read of an empty entity")
        else:
            raise unimplemented(f"{which} is not supported")

    def _read_pre(self, pre: p4runtime_pb2.PacketReplicationEngineEntry) -> Iterator[p4runtime_pb2.Entity]:
        """Multicast groups or clone sessions, all (id 0) or one: as on simple_switch_grpc,
        an id that names none is NOT_FOUND, in its words."""
        if pre.HasField("multicast_group_entry"):
            wanted, stored, field = (pre.multicast_group_entry.multicast_group_id, self.mc_groups,
                                     "multicast_group_entry")
            missing = "Multicast group does not exist"
        elif pre.HasField("clone_session_entry"):
            wanted, stored, field = (pre.clone_session_entry.session_id, self.clone_sessions,
                                     "clone_session_entry")
            missing = "Clone session id does not exist"
        else:
            raise invalid("empty PacketReplicationEngineEntry")
        if wanted and wanted not in stored:
            raise not_found(missing)
        for k in sorted(stored):
            if not wanted or wanted == k:
                yield p4runtime_pb2.Entity(packet_replication_engine_entry=(
                    p4runtime_pb2.PacketReplicationEngineEntry(**{field: stored[k]})))

    def _check_profile_id(self, wanted: int) -> None:
        if wanted and wanted not in self.info.action_profiles:
            raise invalid(f"unknown action profile id {wanted}")

    @staticmethod
    def _profile_match(wanted: int, profile_id: int) -> bool:
        return not wanted or wanted == profile_id

    def _selected_tables(self, table_id: int) -> list[TableInfo]:
        if table_id == 0:  # in the P4Info's order, as simple_switch_grpc reads them
            return list(self.info.tables.values())
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
                # in the order of the entries' slots in the table, as simple_switch_grpc
                # reads them (a new entry takes the lowest free slot); the program's own
                # entries (no handle) first
                records = sorted(state.entries.values(), key=lambda r: -1 if r.handle is None
                                 else r.handle & SLOT_MASK)
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
                out = copy_msg(e)
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
            raise invalid(f"unknown counter id {q.counter_id}")
        for cid in self.info.counters:  # in the P4Info's order, as simple_switch_grpc
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
        kind = "DirectCounterEntry" if counter else "DirectMeterEntry"
        if not q.HasField("table_entry"):
            raise invalid(f"Missing table_entry field in {kind}")  # simple_switch_grpc's words
        te = q.table_entry
        attr = "direct_counter_id" if counter else "direct_meter_id"
        for t in self._selected_tables(te.table_id):
            if not getattr(t, attr):
                if te.table_id:
                    raise invalid(f"table '{t.name}' has no direct {'counter' if counter else 'meter'}")
                continue
            sub = p4runtime_pb2.TableEntry(table_id=t.id, priority=te.priority)
            sub.match.extend(te.match)
            records = self._records(t, sub)
            if len(te.match) and not records:
                # as simple_switch_grpc: a key that names no entry is an error, not an empty read
                raise invalid(f"{kind}: table '{t.name}' has no entry with this key")
            for rec in records:
                if rec.handle is None:
                    continue
                yield self._direct_entity(t, rec, counter)

    def _direct_entity(self, t: TableInfo, rec: TableRecord, counter: bool) -> p4runtime_pb2.Entity:
        """The entry's direct counter or meter, with the entry's key only (not its action),
        as simple_switch_grpc answers."""
        key = p4runtime_pb2.TableEntry(table_id=t.id, priority=rec.entry.priority)
        key.match.extend(rec.entry.match)
        if counter:
            out = p4runtime_pb2.DirectCounterEntry(table_entry=key)
            b, p = self.dp.direct_counter_read(t.name, rec.handle)
            self._fill_counter(out.data, self.info.direct_counters[t.direct_counter_id].unit, b, p)
            return p4runtime_pb2.Entity(direct_counter_entry=out)
        out = p4runtime_pb2.DirectMeterEntry(table_entry=key)
        if rec.meter_config is not None:
            out.config.CopyFrom(rec.meter_config)
        return p4runtime_pb2.Entity(direct_meter_entry=out)

    def _records(self, t: TableInfo, q: p4runtime_pb2.TableEntry) -> list[TableRecord]:
        state = self.tables[t.id]
        if len(q.match):
            _, key = self._entry_key(t, q)
            rec = state.entries.get(key)
            return [rec] if rec else []
        return [r for r in state.entries.values() if not q.priority or r.entry.priority == q.priority]

    def _read_meters(self, q: p4runtime_pb2.MeterEntry) -> Iterator[p4runtime_pb2.Entity]:
        if q.meter_id and q.meter_id not in self.info.meters:
            raise invalid(f"unknown meter id {q.meter_id}")
        for mid in self.info.meters:  # in the P4Info's order, as simple_switch_grpc
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
            raise invalid(f"unknown register id {q.register_id}")
        for rid in self.info.registers:  # in the P4Info's order
            if q.register_id and rid != q.register_id:
                continue
            info = self.info.registers[rid]
            for i in self._indices(info, q, "register"):
                out = p4runtime_pb2.RegisterEntry(register_id=rid)
                out.index.index = i
                out.data.bitstring = bytestrings.encode(self.dp.register_read(info.name, i))
                yield p4runtime_pb2.Entity(register_entry=out)

