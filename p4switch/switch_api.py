"""The embedded switch's control-plane API (p4switch.runtime_api's Dataplane):
tables, action profiles, counters, registers, meters, the packet replication
engine (multicast groups, clone sessions) and port parameters."""

from __future__ import annotations

from p4switch.externs import Meter
from p4switch.runtime_api import ActionCall, DataplaneError, IndirectTarget, MatchParam, Replica
from traffic.vl_arbitration import VlArbitration


class DataplaneApi:
    """Mixin of Switch (p4switch/switch.py)."""

    # ---------------------------------------------------------------- tables
    def _table(self, name: str):
        t = self._prog().tables.get(name)
        if t is None:
            raise DataplaneError(f"unknown table {name!r}")
        return t

    def table_add(self, table: str, key: list[MatchParam], target: ActionCall | IndirectTarget,
                  priority: int = 0) -> int:
        """Add an entry; `priority` follows P4Runtime (a larger value wins)."""
        with self._control():
            return self._table(table).add(key, target, priority)

    def table_modify(self, table: str, handle: int, target: ActionCall | IndirectTarget) -> None:
        with self._control():
            self._table(table).modify(handle, target)

    def table_delete(self, table: str, handle: int) -> None:
        with self._control():
            self._table(table).delete(handle)

    def table_set_default(self, table: str, target: ActionCall | None) -> None:
        with self._control():
            self._table(table).set_default(target)
            # a configuration table baked into the fast path: the generic one from now
            self.specialisation.written(self.program, table)

    def table_clear(self, table: str) -> None:
        with self._control():
            self._table(table).clear()

    def _profile(self, name: str):
        ap = self._prog().profiles.get(name)
        if ap is None:
            raise DataplaneError(f"unknown action profile {name!r}")
        return ap

    def act_prof_add_member(self, profile: str, member_id: int, call: ActionCall) -> None:
        with self._control():
            self._profile(profile).add_member(member_id, call)

    def act_prof_modify_member(self, profile: str, member_id: int, call: ActionCall) -> None:
        with self._control():
            self._profile(profile).modify_member(member_id, call)

    def act_prof_delete_member(self, profile: str, member_id: int) -> None:
        with self._control():
            self._profile(profile).delete_member(member_id)

    def act_prof_set_group(self, profile: str, group_id: int, member_ids: list[int]) -> None:
        with self._control():
            self._profile(profile).set_group(group_id, member_ids)

    def act_prof_delete_group(self, profile: str, group_id: int) -> None:
        with self._control():
            self._profile(profile).delete_group(group_id)

    # ------------------------------------------------------------ stateful externs
    def _counter(self, name: str):
        c = self._prog().counters.get(name)
        if c is None:
            raise DataplaneError(f"unknown counter {name!r}")
        return c

    def counter_read(self, counter: str, index: int) -> tuple[int, int]:
        c = self._counter(counter)
        c.check(index)
        return c.nbytes[index], c.npkts[index]

    def counter_write(self, counter: str, index: int, nbytes: int, packets: int) -> None:
        c = self._counter(counter)
        c.check(index)
        c.nbytes[index], c.npkts[index] = nbytes, packets

    def direct_counter_read(self, table: str, handle: int) -> tuple[int, int]:
        e = self._table(table).in_slot(handle)
        return e.nbytes, e.npkts

    def direct_counter_write(self, table: str, handle: int, nbytes: int, packets: int) -> None:
        e = self._table(table).in_slot(handle)
        e.nbytes, e.npkts = nbytes, packets

    def direct_counter_reset(self, table: str) -> None:
        """Zero the counts of every entry of `table` (simple_switch_CLI's counter_reset
        on a direct counter: bm_mt_reset_counters)."""
        for e in self._table(table).entries.values():
            e.nbytes = e.npkts = 0

    def _value_set(self, name: str) -> set:
        vs = self._prog().parse_vsets.get(name)
        if vs is None:
            raise DataplaneError(f"unknown parse value set {name!r}")
        return vs

    def _padded(self, name: str, value: int) -> int:
        """A value as simple_switch_CLI's pvs_add takes it (the key fields concatenated
        without padding, `compressed_bitwidth` bits) in the select's byte-padded form."""
        out, shift = 0, 0
        for w in reversed(self._prog().vset_key_widths.get(name, [])):
            out |= (value & ((1 << w) - 1)) << shift
            value >>= w
            shift += (w + 7) // 8 * 8
        return out if shift else value

    def value_set_add(self, name: str, value: int) -> None:
        self._value_set(name).add(self._padded(name, value))

    def value_set_remove(self, name: str, value: int) -> None:
        self._value_set(name).discard(self._padded(name, value))

    def value_set_clear(self, name: str) -> None:
        self._value_set(name).clear()

    def _register(self, name: str):
        r = self._prog().registers.get(name)
        if r is None:
            raise DataplaneError(f"unknown register {name!r}")
        return r

    def register_read(self, register: str, index: int) -> int:
        r = self._register(register)
        r.check(index)
        return r.cells[index]

    def register_write(self, register: str, index: int, value: int) -> None:
        r = self._register(register)
        r.check(index)
        r.cells[index] = value & ((1 << r.width) - 1)

    def _meter(self, name: str):
        m = self._prog().meters.get(name)
        if m is None:
            raise DataplaneError(f"unknown meter {name!r}")
        return m

    def meter_set(self, meter: str, index: int, rates: list[tuple[float, int]]) -> None:
        m = self._meter(meter)
        m.check(index)
        m.meters[index].configure(rates)

    def meter_get(self, meter: str, index: int) -> list[tuple[float, int]]:
        m = self._meter(meter)
        m.check(index)
        return list(m.meters[index].rates)

    def direct_meter_set(self, table: str, handle: int, rates: list[tuple[float, int]]) -> None:
        e = self._table(table).in_slot(handle)
        if e.meter is None:
            e.meter = Meter()
        e.meter.configure(rates)

    # ----------------------------------------------------- packet replication engine
    def mc_group_set(self, group_id: int, replicas: list[Replica]) -> None:
        if group_id <= 0:
            raise DataplaneError(f"multicast group id must be positive, got {group_id}")
        self.mc_groups[group_id] = list(replicas)

    def mc_group_delete(self, group_id: int) -> None:
        if self.mc_groups.pop(group_id, None) is None:
            raise DataplaneError(f"no multicast group {group_id}")

    def clone_session_set(self, session_id: int, replicas: list[Replica],
                          class_of_service: int = 0, packet_length_bytes: int = 0) -> None:
        self.clone_sessions[session_id] = (list(replicas), class_of_service, packet_length_bytes)

    def clone_session_delete(self, session_id: int) -> None:
        if self.clone_sessions.pop(session_id, None) is None:
            raise DataplaneError(f"no clone session {session_id}")

    # ---------------------------------------------------------------- ports
    def port_set_params(self, port: int, rate_pps: float | None = None,
                        rate_bps: float | None = None, delay_us: int | None = None,
                        queue_depth: int | None = None, loss: float | None = None) -> None:
        """Egress rate (0 = unlimited), propagation delay, queue depth (packets) and the
        fraction of transmitted frames the port's cable loses (set before start())."""
        if loss is not None and not 0 <= loss < 1:
            raise DataplaneError(f"loss must be a fraction in [0, 1), got {loss}")
        try:
            with self._control():
                self.tm.set_params(port, rate_pps, rate_bps, delay_us, queue_depth)
                if loss:
                    self._wire_loss[port] = [float(loss), 0.0]
                elif loss is not None:
                    self._wire_loss.pop(port, None)
        except ValueError as e:
            raise DataplaneError(str(e)) from None
        self._wake()

    def port_set_vl_arbitration(self, port: int, table: dict | None) -> None:
        """InfiniBand VL arbitration on the port's priority queues (queue = VL); None:
        strict priority, as bmv2."""
        try:
            config = VlArbitration.from_dict(table) if table is not None else None
            with self._control():
                self.tm.set_vl_arbitration(port, config)
        except ValueError as e:  # VlArbitrationError included
            raise DataplaneError(str(e)) from None
        self._wake()

    def tm_drops(self, port: int) -> int:
        """Packets tail-dropped at `port`'s egress queues since start."""
        pq = self.tm.ports.get(port)
        return pq.drops.tail if pq else 0

    def port_drops(self, port: int) -> dict[str, int]:
        """Traffic-manager drops at `port` by reason: tail, port_down, tx_error, bad_priority."""
        pq = self.tm.ports.get(port)
        return pq.drops.as_dict() if pq else {"tail": 0, "port_down": 0, "tx_error": 0,
                                              "bad_priority": 0}
