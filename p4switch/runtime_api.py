"""The contract between the P4Runtime server and the data plane.

The server speaks P4Runtime (ids, protobufs, the spec's error codes) and keeps
what it must answer Reads with; the data plane executes the loaded bmv2 JSON and
knows objects by their bmv2 JSON names, as bmv2's own runtime interface does.
The server translates P4Info ids to those names (P4Info `name` equals the bmv2
JSON `name` for tables, actions, counters, registers, meters, action profiles).

Values cross this boundary as non-negative Python ints of the declared width;
the server has already checked widths and canonical byte strings.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol


class MatchKind(enum.Enum):
    EXACT = "exact"
    LPM = "lpm"
    TERNARY = "ternary"
    RANGE = "range"
    OPTIONAL = "optional"
    VALID = "valid"


@dataclass(frozen=True)
class MatchParam:
    """One key field of a table entry, in key order.

    exact/optional: value (optional with `wildcard=True` matches anything);
    lpm: value + prefix_len; ternary: value + mask; range: low=value, high.
    """

    kind: MatchKind
    value: int = 0
    mask: int | None = None
    prefix_len: int | None = None
    high: int | None = None
    wildcard: bool = False


@dataclass(frozen=True)
class ActionCall:
    action: str  # bmv2 JSON action name, e.g. "FabricIngress.forward"
    args: tuple[int, ...] = ()  # action data in parameter order


@dataclass(frozen=True)
class IndirectTarget:
    """Table entry pointing into an action profile: a member or a group."""

    member: int | None = None
    group: int | None = None


@dataclass(frozen=True)
class Replica:
    egress_port: int
    rid: int = 0  # egress_rid / instance


class DataplaneError(Exception):
    """A data-plane operation that cannot be done (unknown name, full table, ...)."""


class Dataplane(Protocol):
    # program -------------------------------------------------------------------
    def load_program(self, bmv2_json: dict) -> None:
        """Replace the running program; all runtime state is reset. Raises ProgramError."""

    # tables (handles are ints chosen by the data plane) ------------------------
    def table_add(
        self, table: str, key: list[MatchParam], target: ActionCall | IndirectTarget,
        priority: int = 0,
    ) -> int: ...
    def table_modify(self, table: str, handle: int, target: ActionCall | IndirectTarget) -> None: ...
    def table_delete(self, table: str, handle: int) -> None: ...
    def table_set_default(self, table: str, target: ActionCall | None) -> None:
        """None restores the program's default entry."""
    def table_clear(self, table: str) -> None: ...

    # action profiles / selectors ----------------------------------------------
    def act_prof_add_member(self, profile: str, member_id: int, call: ActionCall) -> None: ...
    def act_prof_modify_member(self, profile: str, member_id: int, call: ActionCall) -> None: ...
    def act_prof_delete_member(self, profile: str, member_id: int) -> None: ...
    def act_prof_set_group(self, profile: str, group_id: int, member_ids: list[int]) -> None: ...
    def act_prof_delete_group(self, profile: str, group_id: int) -> None: ...

    # stateful externs ----------------------------------------------------------
    def counter_read(self, counter: str, index: int) -> tuple[int, int]:
        """(bytes, packets)."""
    def counter_write(self, counter: str, index: int, nbytes: int, packets: int) -> None: ...
    def direct_counter_read(self, table: str, handle: int) -> tuple[int, int]: ...
    def direct_counter_write(self, table: str, handle: int, nbytes: int, packets: int) -> None: ...
    def register_read(self, register: str, index: int) -> int: ...
    def register_write(self, register: str, index: int, value: int) -> None: ...
    def meter_set(self, meter: str, index: int, rates: list[tuple[float, int]]) -> None:
        """rates: [(committed info rate per microsecond, burst), (peak rate, burst)]; [] resets."""
    def meter_get(self, meter: str, index: int) -> list[tuple[float, int]]: ...
    def direct_meter_set(self, table: str, handle: int, rates: list[tuple[float, int]]) -> None: ...
    def value_set_add(self, name: str, value: int) -> None:
        """A parse value set's value: the key fields concatenated without padding."""
    def value_set_remove(self, name: str, value: int) -> None: ...
    def value_set_clear(self, name: str) -> None: ...

    # packet replication engine -------------------------------------------------
    def mc_group_set(self, group_id: int, replicas: list[Replica]) -> None: ...
    def mc_group_delete(self, group_id: int) -> None: ...
    def clone_session_set(
        self, session_id: int, replicas: list[Replica], class_of_service: int = 0,
        packet_length_bytes: int = 0,
    ) -> None: ...
    def clone_session_delete(self, session_id: int) -> None: ...

    # controller packets --------------------------------------------------------
    def packet_out(self, frame: bytes) -> None:
        """Inject `frame` as if received on the CPU port (it starts with the packet_out header)."""
    def set_packet_in_handler(self, handler: Callable[[bytes], None]) -> None:
        """handler(frame) for every frame the pipeline sends to the CPU port (packet_in header first)."""
    def set_digest_handler(self, handler: Callable[[str, tuple[int, ...]], None]) -> None:
        """handler(digest name as in the JSON learn_lists, field values)."""
    def set_port_status_handler(self, handler: Callable[[int, bool], None] | None) -> None:
        """handler(port, is_up) whenever a port's carrier changes; None: no longer."""

    # ports ----------------------------------------------------------------------
    def port_set_params(
        self, port: int, rate_pps: float | None = None, rate_bps: float | None = None,
        delay_us: int | None = None, queue_depth: int | None = None,
    ) -> None: ...
    def port_set_vl_arbitration(self, port: int, table: dict | None) -> None:
        """Serve the port's queues by this VL arbitration table (VlArbitration.as_dict());
        None: strict priority."""
