"""Reading one switch for the live view: one P4Runtime Read per sample.

A `SwitchReader` has its own read-only connection (no StreamChannel, so it
never takes part in mastership and cannot disturb the SM) and asks, in one
Read per sample (a P4Runtime call costs more than its cells, with the pure-Python
protobuf the SM runs on):

* counters and table defaults, which every P4Runtime server answers
  (bmv2's too): frames sent and received per port (`FabricEgress.tx_port_counter`,
  `FabricIngress.rx_port_counter`), 802.1Qbb frames per port and class
  (`pause_rx`, `pause_tx`), the ports `port_liveness` marks down, the
  flow-control mode (`fc_config`), and every `DROPS_EVERY` samples the drops per
  port and reason (`drop_counter`: eight cells a port, half of the Read's cost
  when read every time; a reading carries the totals last read);
* registers: blocked time and the blocked-now flag per (egress port,
  class) (`blocked_ns`, `blocked_seen_ns`), frames held per (ingress port, class)
  (`fc_buffer`) and queued per egress port in LOSSY mode (`egress_queued`). bmv2's
  P4Runtime server answers register reads UNIMPLEMENTED: the reader then stops
  asking that switch for registers, its readings say why (`registers_unread`), and
  reads instead the counters fabric.p4 steps beside them (telemetry.p4): the buffer
  is `buffer_in - buffer_out`, the blocked time `blocked_quanta` whole quanta
  (controller/readout.py), blocked-now a queue with tickets outstanding
  (`tickets_issued - tickets_served`, frames held at that gate); the LOSSY queue
  length has no counter form.

Per-class arrays are read only for the classes in use (class 0 and every class
whose `class_tx` counter moved, looked at every `CLASS_SCAN_EVERY` samples):
the embedded switch answers a Read in time proportional to its cells.
A program without one of these arrays leaves that field None.
"""

from __future__ import annotations

import time
from collections.abc import Iterable

from p4.v1 import p4runtime_pb2

from controller import drop_reasons
from controller.flow_control import FC_CONFIG_TABLE, Mode
from controller.liveness import LIVENESS_TABLE, ports_of
from controller.liveview.model import SwitchReading
from controller.p4info import P4Info, P4InfoError, decode
from controller.p4runtime_client import SwitchConnection
from controller.program_layout import LayoutError, layout
from controller.readout import BLOCKED_QUANTUM_NS

TX_COUNTER = "FabricEgress.tx_port_counter"
RX_COUNTER = "FabricIngress.rx_port_counter"
DROP_COUNTER = "FabricIngress.drop_counter"
CLASS_TX = "class_tx"
PER_CLASS_COUNTERS = ("pause_rx", "pause_tx")
PER_CLASS_REGISTERS = ("blocked_ns", "blocked_seen_ns", "fc_buffer")
PER_PORT_REGISTERS = ("egress_queued",)
# per-class counter forms of the registers, read where registers are not (bmv2)
STEP_COUNTERS = ("buffer_in", "buffer_out", "blocked_quanta", "tickets_issued",
                 "tickets_served")
CLASS_SCAN_EVERY = 10  # samples between looks for classes that began to carry data
DROPS_EVERY = 5  # samples between reads of the drop counter


def _counter(info: P4Info, name: str) -> int | None:
    try:
        return info.counter(name).id
    except P4InfoError:
        return None


def _register(info: P4Info, name: str) -> int | None:
    try:
        return info.register(name).id
    except P4InfoError:
        return None


def _table(info: P4Info, name: str) -> int | None:
    try:
        return info.table(name).id
    except P4InfoError:
        return None


def _counter_entities(counter_id: int | None, indices: Iterable[int]) -> list:
    if counter_id is None:
        return []
    out = []
    for i in indices:
        entry = p4runtime_pb2.CounterEntry(counter_id=counter_id)
        entry.index.index = i
        out.append(p4runtime_pb2.Entity(counter_entry=entry))
    return out


def _register_entities(register_id: int | None, indices: Iterable[int]) -> list:
    if register_id is None:
        return []
    out = []
    for i in indices:
        entry = p4runtime_pb2.RegisterEntry(register_id=register_id)
        entry.index.index = i
        out.append(p4runtime_pb2.Entity(register_entry=entry))
    return out


def _default_entry(table_id: int | None) -> list:
    if table_id is None:
        return []
    return [p4runtime_pb2.Entity(table_entry=p4runtime_pb2.TableEntry(
        table_id=table_id, is_default_action=True))]


class SwitchReader:
    """The live view's reads of one switch (see the module doc)."""

    def __init__(self, name: str, address: str, device_id: int, p4info: P4Info,
                 ports: list[int], reasons: drop_reasons.DropReasons | None = None,
                 timeout: float = 2.0) -> None:
        self.name = name
        self.address = address
        self.device_id = device_id
        self.info = p4info
        self.ports = sorted(ports)
        self.timeout = timeout
        try:
            shape = layout(p4info)
            self.num_classes, self.reasons = shape.num_classes, shape.drop_reasons
        except (LayoutError, P4InfoError):
            self.num_classes, self.reasons = 1, 0
        self.reason_names = reasons or drop_reasons.load()
        self.classes: set[int] = {0}
        self.drops: dict[int, dict[str, int]] | None = None  # the totals last read
        self.registers_unread: str | None = None
        self._conn: SwitchConnection | None = None
        self._samples = 0
        self._ids = {name: _counter(p4info, name) for name in
                     (TX_COUNTER, RX_COUNTER, DROP_COUNTER, CLASS_TX, *PER_CLASS_COUNTERS,
                      *STEP_COUNTERS)}
        self._ids.update({name: _register(p4info, name) for name in
                          PER_CLASS_REGISTERS + PER_PORT_REGISTERS})
        self._liveness = _table(p4info, LIVENESS_TABLE)
        self._fc_config = _table(p4info, FC_CONFIG_TABLE)
        self._names = {v: k for k, v in self._ids.items() if v is not None}

    # ------------------------------------------------------------------ requests
    def _class_cells(self, classes: Iterable[int]) -> list[int]:
        return [p * self.num_classes + c for p in self.ports for c in sorted(classes)]

    def counter_request(self, scan_classes: bool, drops: bool = True) -> list:
        ids = self._ids
        entities = _counter_entities(ids[TX_COUNTER], self.ports)
        entities += _counter_entities(ids[RX_COUNTER], self.ports)
        for name in PER_CLASS_COUNTERS:
            entities += _counter_entities(ids[name], self._class_cells(self.classes))
        if drops and self.reasons:
            entities += _counter_entities(ids[DROP_COUNTER], [
                p * self.reasons + r for p in self.ports for r in range(self.reasons)])
        if scan_classes:
            entities += _counter_entities(ids[CLASS_TX],
                                          self._class_cells(range(self.num_classes)))
        if self.registers_unread is not None and self._has_step_counters():
            for name in STEP_COUNTERS:
                entities += _counter_entities(ids[name], self._class_cells(self.classes))
        return entities + _default_entry(self._liveness) + _default_entry(self._fc_config)

    def register_request(self) -> list:
        entities = []
        for name in PER_CLASS_REGISTERS:
            entities += _register_entities(self._ids[name], self._class_cells(self.classes))
        for name in PER_PORT_REGISTERS:
            entities += _register_entities(self._ids[name], self.ports)
        return entities

    # ------------------------------------------------------------------- reading
    def _connection(self) -> SwitchConnection:
        if self._conn is None:
            conn = SwitchConnection(f"{self.name}-view", self.address, self.device_id,
                                    timeout=self.timeout, observe_only=True)
            conn.p4info = self.info
            self._conn = conn
        return self._conn

    def read(self) -> SwitchReading:
        """This switch now; a switch that does not answer gives a reading with `error`.
        Counters and registers go in one Read; a switch that answers it UNIMPLEMENTED
        (bmv2: registers) is asked for the counters alone from then on."""
        scan = self._samples % CLASS_SCAN_EVERY == 0
        drops = self._samples % DROPS_EVERY == 0 or self.drops is None
        self._samples += 1
        counters = self.counter_request(scan, drops)
        registers = self.register_request() if self.registers_unread is None else []
        try:
            conn = self._connection()
            try:
                answer = conn.read(counters + registers)
            except Exception as exc:  # noqa: BLE001 -- told apart just below
                text = str(exc)
                if not registers or "UNIMPLEMENTED" not in text:
                    raise
                self.registers_unread = text.removeprefix(f"switch {self.name}-view: ")
                registers = []
                answer = conn.read(self.counter_request(scan, drops))
            t_ns = time.time_ns()
        except Exception as exc:  # noqa: BLE001 -- a dead switch is a state to show
            self.close()
            return SwitchReading(self.name, time.time_ns(),
                                 error=str(exc).removeprefix(f"switch {self.name}-view: "))
        return self.decode(t_ns, answer, registers_read=bool(registers))

    def decode(self, t_ns: int, entities: list, registers_read: bool) -> SwitchReading:
        """A SwitchReading from the answer to `counter_request` (+ `register_request`
        when `registers_read`)."""
        cells: dict[str, dict[int, int]] = {}
        down, mode = None, None
        for entity in entities:
            which = entity.WhichOneof("entity")
            if which == "counter_entry":
                e = entity.counter_entry
                cells.setdefault(self._names.get(e.counter_id, ""), {})[e.index.index] = \
                    e.data.packet_count
            elif which == "register_entry":
                e = entity.register_entry
                cells.setdefault(self._names.get(e.register_id, ""), {})[e.index.index] = \
                    decode(e.data.bitstring)
            elif which == "table_entry":
                down, mode = self._table_default(entity.table_entry, down, mode)
        self._note_classes(cells.get(CLASS_TX, {}))
        if DROP_COUNTER in cells:
            self.drops = self._drops_by_reason(cells[DROP_COUNTER])
        state = self._registers(cells) if registers_read else self._from_counters(cells)
        return SwitchReading(
            self.name, t_ns,
            tx=self._per_port(cells, TX_COUNTER), rx=self._per_port(cells, RX_COUNTER),
            pause_rx=self._by_port(cells.get("pause_rx", {}), self.num_classes, sum),
            pause_tx=self._by_port(cells.get("pause_tx", {}), self.num_classes, sum),
            drops=self.drops, **state,
            down=down, mode=mode, registers_unread=self.registers_unread)

    def _registers(self, cells: dict) -> dict:
        """The flow-control state from the registers read."""
        k = self.num_classes
        return {
            "blocked_ns": self._by_port(cells["blocked_ns"], k, sum)
            if "blocked_ns" in cells else None,
            "blocked_now": self._by_port(cells["blocked_seen_ns"], k,
                                         lambda vs: any(v != 0 for v in vs))
            if "blocked_seen_ns" in cells else None,
            "buffer": self._by_port(cells["fc_buffer"], k, sum)
            if "fc_buffer" in cells else None,
            "queued": self._per_port(cells, "egress_queued")}

    def _from_counters(self, cells: dict) -> dict:
        """The flow-control state from its counter forms (module doc); None without them."""
        if not all(name in cells for name in STEP_COUNTERS):
            return {}
        k = self.num_classes

        def minus(a: str, b: str) -> dict[int, int]:
            return {i: v - cells[b].get(i, 0) for i, v in cells[a].items()}

        return {"blocked_ns": self._by_port({i: v * BLOCKED_QUANTUM_NS for i, v in
                                              cells["blocked_quanta"].items()}, k, sum),
                "blocked_now": self._by_port(minus("tickets_issued", "tickets_served"), k,
                                             lambda vs: any(v > 0 for v in vs)),
                "buffer": self._by_port(minus("buffer_in", "buffer_out"), k, sum)}

    def _has_step_counters(self) -> bool:
        return all(self._ids[name] is not None for name in STEP_COUNTERS)

    def _table_default(self, entry, down, mode):
        params = [decode(p.value) for p in entry.action.action.params]
        if entry.table_id == self._liveness:
            down = frozenset(ports_of(params[0]) if params else ())
        elif entry.table_id == self._fc_config and entry.action.action.action_id:
            value = self._mode_param(entry.action.action)
            if value is not None:
                mode = Mode(value).name if value in Mode._value2member_map_ else \
                    f"mode {value}"
        return down, mode

    def _mode_param(self, call) -> int | None:
        """The `mode` parameter of fc_config's default action (controller/flow_control.py)."""
        try:
            action = self.info.action(self.info.name(call.action_id))
            mode_id = action.param("mode").id
        except (P4InfoError, KeyError):
            return None
        return next((decode(p.value) for p in call.params if p.param_id == mode_id), None)

    def _per_port(self, cells: dict, name: str) -> dict[int, int] | None:
        values = cells.get(name)
        if values is None:
            return {} if name in (TX_COUNTER, RX_COUNTER) else None
        return {p: values[p] for p in self.ports if p in values}

    def _by_port(self, values: dict[int, int], block: int, combine) -> dict[int, object]:
        grouped: dict[int, list[int]] = {}
        for index, value in values.items():
            grouped.setdefault(index // block, []).append(value)
        return {p: combine(vs) for p, vs in grouped.items() if p in self.ports}

    def _drops_by_reason(self, cells: dict[int, int]) -> dict[int, dict[str, int]]:
        out: dict[int, dict[str, int]] = {p: {} for p in self.ports}
        for index, packets in cells.items():
            port, reason = divmod(index, self.reasons)
            if packets and port in out:
                out[port][self.reason_names.names.get(reason, f"reason{reason}")] = packets
        return out

    def _note_classes(self, class_tx: dict[int, int]) -> None:
        for index, packets in class_tx.items():
            if packets:
                self.classes.add(index % self.num_classes)

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
