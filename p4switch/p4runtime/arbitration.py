"""Client arbitration (spec "Client Arbitration and Controller Replication").

Per (device, role) the server keeps the live controllers and the highest
election id it has ever seen (`election_id_past`). A controller whose election
id is >= that becomes (or stays) primary; a primary that lowers its id or
disconnects leaves the role without a primary until some controller sends an
update with an id >= the highest seen. A controller may leave its election id
unset: it is a backup that never becomes primary (a reader, e.g. a local
agent). Notifications: OK to the primary, ALREADY_EXISTS to backups while a
primary exists, NOT_FOUND to backups when there is none.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from google.protobuf import any_pb2
from google.rpc import code_pb2
from p4.v1 import p4runtime_pb2

from .errors import P4RuntimeError, failed_precondition, invalid, not_found


def election_id_of(msg) -> int | None:
    """The 128-bit election id of a request, None when the field is unset."""
    if not msg.HasField("election_id"):
        return None
    return (msg.election_id.high << 64) | msg.election_id.low


@dataclass(eq=False)
class Controller:
    """One StreamChannel: who is on it and how to send it a response."""

    send: Callable[[p4runtime_pb2.StreamMessageResponse], None]
    peer: str = ""
    device_id: int | None = None
    role: str | None = None
    election_id: int | None = None
    arbitrated: bool = False
    wants_port_status: bool = False


@dataclass
class _Role:
    controllers: list[Controller] = field(default_factory=list)
    primary: Controller | None = None
    election_id_past: int | None = None
    config: any_pb2.Any | None = None


class Arbitrator:
    def __init__(self, device_id: int):
        self.device_id = device_id
        self._lock = threading.Lock()
        self._roles: dict[str, _Role] = {}

    # stream events ------------------------------------------------------------
    def update(self, ctl: Controller, msg: p4runtime_pb2.MasterArbitrationUpdate) -> None:
        """Apply a MasterArbitrationUpdate from `ctl`; raises to terminate the stream."""
        role_name = msg.role.name if msg.HasField("role") else ""
        config = msg.role.config if msg.HasField("role") and msg.role.HasField("config") else None
        eid = election_id_of(msg)
        with self._lock:
            if not ctl.arbitrated:
                if msg.device_id != self.device_id:
                    raise not_found(f"unknown device id {msg.device_id}")
            else:
                if msg.device_id != ctl.device_id:
                    raise failed_precondition(
                        f"device id {msg.device_id} differs from this stream's {ctl.device_id}"
                    )
                if role_name != ctl.role:
                    raise failed_precondition(
                        f"role '{role_name}' differs from this stream's '{ctl.role}'"
                    )
            role = self._roles.setdefault(role_name, _Role())
            if eid is not None and any(
                c is not ctl and c.election_id == eid for c in role.controllers
            ):
                raise invalid(f"election id {eid} is already used by another controller")
            if not ctl.arbitrated:
                ctl.arbitrated, ctl.device_id, ctl.role = True, msg.device_id, role_name
                role.controllers.append(ctl)
            ctl.election_id = eid
            was_primary = role.primary is ctl
            if eid is not None and (role.election_id_past is None or eid >= role.election_id_past):
                role.primary = ctl
                role.election_id_past = eid
                role.config = config
                self._notify(role_name, role, role.controllers)
            elif was_primary:
                role.primary = None
                self._notify(role_name, role, role.controllers)
            else:
                self._notify(role_name, role, [ctl])

    def remove(self, ctl: Controller) -> None:
        """The stream of `ctl` closed."""
        with self._lock:
            role = self._roles.get(ctl.role) if ctl.arbitrated else None
            if role is None or ctl not in role.controllers:
                return
            role.controllers.remove(ctl)
            if role.primary is ctl:
                role.primary = None
                self._notify(ctl.role, role, role.controllers)

    def _notify(self, role_name: str, role: _Role, targets: list[Controller]) -> None:
        for c in targets:
            resp = p4runtime_pb2.StreamMessageResponse()
            upd = resp.arbitration
            upd.device_id = self.device_id
            if role_name or role.config is not None:
                upd.role.name = role_name
                if role.config is not None:
                    upd.role.config.CopyFrom(role.config)
            if role.election_id_past is not None:
                upd.election_id.high = role.election_id_past >> 64
                upd.election_id.low = role.election_id_past & ((1 << 64) - 1)
            if role.primary is c:
                upd.status.code = code_pb2.OK
                upd.status.message = "is primary"
            elif role.primary is not None:
                upd.status.code = code_pb2.ALREADY_EXISTS
                upd.status.message = "is backup: a primary exists"
            else:
                upd.status.code = code_pb2.NOT_FOUND
                upd.status.message = "is backup: no primary"
            c.send(resp)

    # queries --------------------------------------------------------------------
    def check_primary(self, role_name: str, election_id: int | None, what: str) -> None:
        """Raise PERMISSION_DENIED unless `election_id` is the primary's for `role_name`."""
        with self._lock:
            role = self._roles.get(role_name)
            primary = role.primary if role else None
            if primary is None or election_id is None or primary.election_id != election_id:
                raise P4RuntimeError(
                    code_pb2.PERMISSION_DENIED,
                    f"{what} refused: election id {election_id} is not the primary's "
                    f"for role '{role_name}'",
                )

    def is_primary(self, ctl: Controller) -> bool:
        with self._lock:
            role = self._roles.get(ctl.role) if ctl.arbitrated else None
            return role is not None and role.primary is ctl

    def primaries(self) -> list[Controller]:
        with self._lock:
            return [r.primary for r in self._roles.values() if r.primary is not None]

    def controllers(self) -> list[Controller]:
        with self._lock:
            return [c for r in self._roles.values() for c in r.controllers]
