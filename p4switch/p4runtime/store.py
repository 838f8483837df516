"""What the server holds for one loaded pipeline, and Write/Read on it.

Every written entity is kept as its canonical protobuf (to answer Reads with
read-write symmetry) next to what the data plane needs (handles). Each write
returns an undo closure so a batch can be rolled back (ROLLBACK_ON_ERROR).
Counter, register and meter cells live in the data plane and are read from it.
The caller serializes all calls (one lock in the servicer).
"""

from __future__ import annotations

from collections.abc import Callable

from p4.v1 import p4runtime_pb2

from ..runtime_api import Dataplane
from .errors import (
    P4RuntimeError,
    invalid,
    unimplemented,
)
from .p4info import PipelineInfo
from .store_common import (
    DELETE,
    INSERT,
    MODIFY,
    TableState,
    Undo,
    copy_msg,
)
from .store_profiles import ProfileWrites
from .store_read import Reads
from .store_resources import ResourceWrites
from .store_tables import TableWrites
from .store_value_sets import ValueSetWrites
from .store_vl_arbitration import VlArbitrationWrites


class PipelineState(TableWrites, ProfileWrites, ResourceWrites, Reads, VlArbitrationWrites,
                    ValueSetWrites):
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
        self.vl_arbitration: dict[int, dict] = {}  # port -> VlArbitration.as_dict()
        self.value_sets: dict[int, list[p4runtime_pb2.ValueSetMember]] = {}  # set id -> members
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
        if which == "extern_entry":
            return self._write_vl_arbitration(kind, entity.extern_entry)
        if which == "value_set_entry":
            return self._write_value_set(kind, entity.value_set_entry)
        if which is None:
            raise invalid("update without an entity")
        raise unimplemented(f"{which} is not supported")


















































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
                e = copy_msg(rec.entry)
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
        for sid, members in self.value_sets.items():
            updates.append(p4runtime_pb2.Entity(value_set_entry=p4runtime_pb2.ValueSetEntry(
                value_set_id=sid, members=members)))
        for entity in updates:
            is_default = entity.HasField("table_entry") and entity.table_entry.is_default_action
            kind = MODIFY if is_default or entity.HasField("meter_entry") or entity.HasField(
                "value_set_entry") else INSERT
            try:
                new.write(p4runtime_pb2.Update(type=kind, entity=entity))
            except P4RuntimeError:
                pass


