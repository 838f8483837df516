"""Counters, meters, registers, the packet replication engine and digests: writes.

A mixin of store.PipelineState (p4switch/p4runtime/store.py): the state it reads and
writes is PipelineState's."""

from __future__ import annotations

from collections.abc import Callable

from p4.v1 import p4runtime_pb2

from ..runtime_api import Replica
from . import bytestrings
from .errors import (
    already_exists,
    invalid,
    not_found,
    out_of_range,
    unimplemented,
)
from .store_common import (
    DELETE,
    INSERT,
    MODIFY,
    Undo,
    copy_msg,
    dp_call,
    meter_rates,
)


class ResourceWrites:
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
            raise invalid(f"unknown counter id {c.counter_id}")
        if kind != MODIFY:
            raise invalid(f"counter '{info.name}': only MODIFY is allowed")
        indices = self._indices(info, c, "counter")
        old = [(i, self.dp.counter_read(info.name, i)) for i in indices]
        for i in indices:
            dp_call(self.dp.counter_write, info.name, i, c.data.byte_count, c.data.packet_count)

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
        dp_call(self.dp.direct_counter_write, t.name, rec.handle, d.data.byte_count, d.data.packet_count)
        return lambda: self.dp.direct_counter_write(t.name, rec.handle, *old)

    def _write_meter(self, kind: int, m: p4runtime_pb2.MeterEntry) -> Undo:
        info = self.info.meters.get(m.meter_id)
        if info is None:
            raise invalid(f"unknown meter id {m.meter_id}")
        if kind != MODIFY:
            raise invalid(f"meter '{info.name}': only MODIFY is allowed")
        indices = self._indices(info, m, "meter")
        rates = meter_rates(m.config) if m.HasField("config") else []
        old = {i: self.meter_configs.get((info.id, i)) for i in indices}
        for i in indices:
            dp_call(self.dp.meter_set, info.name, i, rates)
            if rates:
                self.meter_configs[(info.id, i)] = copy_msg(m.config)
            else:
                self.meter_configs.pop((info.id, i), None)

        def undo() -> None:
            for i, cfg in old.items():
                self.dp.meter_set(info.name, i, meter_rates(cfg) if cfg else [])
                if cfg:
                    self.meter_configs[(info.id, i)] = cfg
                else:
                    self.meter_configs.pop((info.id, i), None)

        return undo

    def _write_direct_meter(self, kind: int, d: p4runtime_pb2.DirectMeterEntry) -> Undo:
        if kind != MODIFY:
            raise invalid("direct meter: only MODIFY is allowed")
        t, rec = self._direct_record(d.table_entry, "direct meter", "direct_meter_id")
        rates = meter_rates(d.config) if d.HasField("config") else []
        old = rec.meter_config
        dp_call(self.dp.direct_meter_set, t.name, rec.handle, rates)
        rec.meter_config = copy_msg(d.config) if rates else None

        def undo() -> None:
            self.dp.direct_meter_set(t.name, rec.handle, meter_rates(old) if old else [])
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

    def _write_keyed(self, kind: int, store: dict, key: int, what: str, noun: str, new,
                     apply: Callable, remove: Callable) -> Undo:
        """INSERT/MODIFY/DELETE of a PRE entry kept in `store` under `key`, with the
        specification's existence rules; the data plane is changed by `apply(entry)` and
        `remove(key)` (refusals reported), and the undo restores what was there."""
        old = store.get(key)
        if kind == INSERT and old is not None:
            raise already_exists(f"{what} already exists")
        if kind in (MODIFY, DELETE) and old is None:
            raise not_found(f"{what}: no such {noun}")
        if kind == DELETE:
            remove(key, checked=True)
            return lambda: apply(old)
        apply(new, checked=True)
        if old is None:
            return lambda: remove(key)
        return lambda: apply(old)

    def _write_mc_group(self, kind: int, g: p4runtime_pb2.MulticastGroupEntry) -> Undo:
        if g.multicast_group_id == 0:
            raise invalid("multicast group id 0 is reserved")
        return self._write_keyed(kind, self.mc_groups, g.multicast_group_id,
                                 f"multicast group {g.multicast_group_id}", "group", g,
                                 self._set_mc, self._delete_mc)

    def _delete_mc(self, group_id: int, checked: bool = False) -> None:
        (dp_call if checked else _call)(self.dp.mc_group_delete, group_id)
        self.mc_groups.pop(group_id, None)

    def _set_mc(self, g, checked: bool = False) -> None:
        replicas = self._replicas(g.replicas, f"multicast group {g.multicast_group_id}")
        (dp_call if checked else _call)(self.dp.mc_group_set, g.multicast_group_id, replicas)
        self.mc_groups[g.multicast_group_id] = copy_msg(g)

    def _write_clone_session(self, kind: int, s: p4runtime_pb2.CloneSessionEntry) -> Undo:
        what = f"clone session {s.session_id}"
        if s.session_id == 0:
            raise invalid("clone session id 0 is reserved")
        if s.packet_length_bytes < 0:
            raise invalid(f"{what}: negative packet_length_bytes")
        return self._write_keyed(kind, self.clone_sessions, s.session_id, what, "session", s,
                                 self._set_clone, self._delete_clone)

    def _delete_clone(self, session_id: int, checked: bool = False) -> None:
        (dp_call if checked else _call)(self.dp.clone_session_delete, session_id)
        self.clone_sessions.pop(session_id, None)

    def _set_clone(self, s, checked: bool = False) -> None:
        replicas = self._replicas(s.replicas, f"clone session {s.session_id}")
        (dp_call if checked else _call)(self.dp.clone_session_set, s.session_id, replicas,
                                        s.class_of_service, s.packet_length_bytes)
        self.clone_sessions[s.session_id] = copy_msg(s)

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
            self.digest_configs[d.digest_id] = copy_msg(d)
            self.on_digest_config(d.digest_id, self.digest_configs[d.digest_id])

        def undo() -> None:
            if old is None:
                self.digest_configs.pop(d.digest_id, None)
            else:
                self.digest_configs[d.digest_id] = old
            self.on_digest_config(d.digest_id, old)

        return undo


def _call(call: Callable, *args):
    """The data plane called directly: an undo restores what it held before."""
    return call(*args)
