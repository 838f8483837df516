"""Digest lists: batching learned data per DigestEntry config, and acks.

Per configured digest: data accumulate until `max_list_size` entries (0: no
size limit) or `max_timeout_ns` after the first one (0: at once), then go out
as one DigestList to the primary controllers. Data already sent stay cached
until the list is acknowledged (DigestListAck) or `ack_timeout_ns` passes, and
an identical datum arriving meanwhile is suppressed, as the spec asks. A
digest without a config is dropped. One thread, started with the first config,
sleeps when nothing is pending.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from p4.v1 import p4data_pb2, p4runtime_pb2

from . import bytestrings
from .p4info import DigestInfo


@dataclass
class _DigestState:
    config: p4runtime_pb2.DigestEntry.Config
    pending: list[tuple[int, ...]] = field(default_factory=list)
    first_pending_ns: int = 0
    cache: set[tuple[int, ...]] = field(default_factory=set)
    # list_id -> (values sent, ack deadline in monotonic ns)
    unacked: dict[int, tuple[list[tuple[int, ...]], int]] = field(default_factory=dict)


class DigestEngine:
    def __init__(self, send: Callable[[p4runtime_pb2.StreamMessageResponse], None]):
        self._send = send
        self._cond = threading.Condition()
        self._digests: dict[int, _DigestState] = {}
        self._infos: dict[int, DigestInfo] = {}
        self._next_list_id = 1
        self._thread: threading.Thread | None = None
        self._stopped = False

    def configure(self, info: DigestInfo, entry: p4runtime_pb2.DigestEntry | None) -> None:
        with self._cond:
            if entry is None:
                self._digests.pop(info.id, None)
                return
            self._infos[info.id] = info
            st = self._digests.get(info.id)
            if st is None:
                self._digests[info.id] = _DigestState(entry.config)
            else:
                st.config = entry.config
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="p4rt-digests", daemon=True
                )
                self._thread.start()
            self._cond.notify()

    def reset(self) -> None:
        """A new pipeline: forget every config and pending datum."""
        with self._cond:
            self._digests.clear()
            self._infos.clear()

    def stop(self) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify()

    def learn(self, digest_id: int, values: tuple[int, ...]) -> None:
        with self._cond:
            st = self._digests.get(digest_id)
            if st is None or values in st.cache or values in st.pending:
                return
            if not st.pending:
                st.first_pending_ns = time.monotonic_ns()
            st.pending.append(values)
            self._cond.notify()

    def ack(self, digest_id: int, list_id: int) -> bool:
        """Acknowledge a list; False when no such list is outstanding."""
        with self._cond:
            st = self._digests.get(digest_id)
            if st is None or list_id not in st.unacked:
                return False
            values, _ = st.unacked.pop(list_id)
            st.cache.difference_update(values)
            return True

    # the thread ---------------------------------------------------------------------
    def _run(self) -> None:
        while True:
            out: list[p4runtime_pb2.StreamMessageResponse] = []
            with self._cond:
                if self._stopped:
                    return
                now = time.monotonic_ns()
                wake: int | None = None
                for did, st in self._digests.items():
                    for list_id, (values, deadline) in list(st.unacked.items()):
                        if now >= deadline:
                            del st.unacked[list_id]
                            st.cache.difference_update(values)
                        else:
                            wake = deadline if wake is None else min(wake, deadline)
                    if not st.pending:
                        continue
                    c = st.config
                    due = st.first_pending_ns + c.max_timeout_ns
                    full = c.max_list_size > 0 and len(st.pending) >= c.max_list_size
                    if full or now >= due:
                        out.append(self._make_list(did, st, now))
                    else:
                        wake = due if wake is None else min(wake, due)
                if not out:
                    timeout = None if wake is None else max(0.0, (wake - now) / 1e9)
                    self._cond.wait(timeout)
                    continue
            for msg in out:
                self._send(msg)

    def _make_list(self, did: int, st: _DigestState, now: int) -> p4runtime_pb2.StreamMessageResponse:
        limit = st.config.max_list_size or len(st.pending)
        values, st.pending = st.pending[:limit], st.pending[limit:]
        st.first_pending_ns = now
        list_id = self._next_list_id
        self._next_list_id += 1
        if st.config.ack_timeout_ns > 0:
            st.cache.update(values)
            st.unacked[list_id] = (values, now + st.config.ack_timeout_ns)
        info = self._infos[did]
        msg = p4runtime_pb2.StreamMessageResponse()
        dl = msg.digest
        dl.digest_id, dl.list_id, dl.timestamp = did, list_id, time.time_ns()
        for v in values:
            dl.data.append(to_p4data(info, v))
        return msg


def to_p4data(info: DigestInfo, values: tuple[int, ...]) -> p4data_pb2.P4Data:
    data = p4data_pb2.P4Data()
    if info.is_struct:
        for v in values:
            data.struct.members.add().bitstring = bytestrings.encode(v)
    else:
        data.bitstring = bytestrings.encode(values[0] if values else 0)
    return data
