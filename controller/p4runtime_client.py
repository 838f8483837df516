"""One P4Runtime client per switch: arbitration, pipeline push, writes, reads, packet I/O.

    conn = SwitchConnection("s1", "127.0.0.1:9559", device_id=1)   # becomes primary
    conn.set_pipeline("build/fabric.p4info.txtpb", "build/fabric.json")
    conn.write([conn.insert(conn.p4info.table_entry(...))])
    conn.close()

The StreamChannel is read by a background thread: arbitration answers wake the
constructor, packet-ins go to `packet_ins` (a queue.Queue of `PacketIn`).
A switch that rejects updates raises `SwitchWriteError` naming the switch, each
rejected entry in the program's names, and the switch's reason; the updates it
accepted stay accepted (CONTINUE_ON_ERROR), so one bad entry does not undo a
route install. Works the same against bmv2's simple_switch_grpc and the
embedded switch: only the P4Runtime protocol is used.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import grpc
from google.protobuf import struct_pb2
from google.rpc import code_pb2, status_pb2
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

from controller.p4info import P4Info, decode, encode
from traffic.vl_arbitration import P4RUNTIME_EXTERN_TYPE_ID, VlArbitration

WRITE_BATCH = 1000  # updates per WriteRequest


class SwitchConnectionError(Exception):
    """The switch could not be reached or the stream broke."""


class NotPrimaryError(SwitchConnectionError):
    """Another controller holds a higher election id on this switch."""


class SwitchWriteError(Exception):
    """Some updates of a Write were rejected; `failures` lists (update, code name, message)."""

    def __init__(self, switch: str, failures: list[tuple[str, str, str]]) -> None:
        self.switch = switch
        self.failures = failures
        shown = "; ".join(f"{what}: {code}: {msg}" for what, code, msg in failures[:5])
        more = f" (and {len(failures) - 5} more)" if len(failures) > 5 else ""
        super().__init__(f"switch {switch} rejected {len(failures)} update(s): {shown}{more}")


class SwitchRpcError(Exception):
    """A P4Runtime RPC other than Write failed."""


@dataclass(frozen=True)
class PacketIn:
    payload: bytes
    metadata: dict[str, int]  # by packet_in header field name


def _uint128(pair: tuple[int, int]) -> p4runtime_pb2.Uint128:
    return p4runtime_pb2.Uint128(high=pair[0], low=pair[1])


# A pipeline push makes the switch build the program (the embedded switch generates
# and compiles its code, ~0.3 s of CPU for fabric.p4; bmv2 parses the JSON and builds
# its objects). A bring-up pushes to every switch at once, so on a 2-core machine 20
# of them share the CPU: a clean clone's fattree:4 bring-up overran the 5 s its calls
# had (`fabriclab bringup`'s connect timeout). A push is rare and worth waiting for;
# a dead switch still fails it.
PIPELINE_TIMEOUT_S = 60.0


class SwitchConnection:
    """A primary P4Runtime connection to one switch; see the module doc."""

    def __init__(self, name: str, address: str, device_id: int,
                 election_id: tuple[int, int] = (0, 1), timeout: float = 10.0,
                 role: str = "", observe_only: bool = False,
                 pipeline_timeout: float | None = None) -> None:
        """`observe_only`: no StreamChannel, so no arbitration: the connection can
        Read and fetch the pipeline (P4Runtime needs no mastership for those) and
        can never take a switch away from a running SM. `pipeline_timeout`: the
        deadline of a pipeline push (PIPELINE_TIMEOUT_S, or `timeout` if longer)."""
        self.name = name
        self.role = role  # P4Runtime role: a primary per role (the agent's is not the SM's)
        self.address = address
        self.device_id = device_id
        self.election_id = election_id
        self.timeout = timeout
        self.pipeline_timeout = max(timeout, PIPELINE_TIMEOUT_S) if pipeline_timeout is None \
            else pipeline_timeout
        self.p4info: P4Info | None = None
        self.packet_ins: queue.Queue[PacketIn] = queue.Queue()
        self._channel = grpc.insecure_channel(address)
        self._stub = p4runtime_pb2_grpc.P4RuntimeStub(self._channel)
        self._requests: queue.Queue[p4runtime_pb2.StreamMessageRequest | None] = queue.Queue()
        self._arbitration: queue.Queue[p4runtime_pb2.MasterArbitrationUpdate | Exception] = \
            queue.Queue()
        self._closed = False
        self.stream_error: SwitchConnectionError | None = None  # set if the stream broke
        try:
            grpc.channel_ready_future(self._channel).result(timeout=timeout)
        except grpc.FutureTimeoutError:
            self._channel.close()
            raise SwitchConnectionError(
                f"switch {name}: no P4Runtime server at {address} after {timeout:g}s") from None
        if observe_only:
            return
        self._stream = self._stub.StreamChannel(self._request_iterator())
        self._reader = threading.Thread(target=self._read_stream, daemon=True,
                                        name=f"p4rt-stream-{name}")
        self._reader.start()
        self._arbitrate()

    # ------------------------------------------------------------- stream channel

    def _request_iterator(self) -> Iterator[p4runtime_pb2.StreamMessageRequest]:
        while True:
            request = self._requests.get()
            if request is None:
                return
            yield request

    def _read_stream(self) -> None:
        try:
            for response in self._stream:
                which = response.WhichOneof("update")
                if which == "arbitration":
                    self._arbitration.put(response.arbitration)
                elif which == "packet":
                    self.packet_ins.put(self._decode_packet_in(response.packet))
        except grpc.RpcError as exc:
            if not self._closed:
                self.stream_error = SwitchConnectionError(
                    f"switch {self.name}: stream channel closed: {exc.code().name}: "
                    f"{exc.details()}")
                self._arbitration.put(self.stream_error)

    def _arbitrate(self) -> None:
        request = p4runtime_pb2.StreamMessageRequest()
        request.arbitration.device_id = self.device_id
        request.arbitration.election_id.CopyFrom(_uint128(self.election_id))
        if self.role:
            request.arbitration.role.name = self.role
        self._requests.put(request)
        try:
            answer = self._arbitration.get(timeout=self.timeout)
        except queue.Empty:
            self.close()
            raise SwitchConnectionError(
                f"switch {self.name}: no arbitration answer within {self.timeout:g}s") from None
        if isinstance(answer, Exception):
            self.close()
            raise answer
        if answer.status.code != code_pb2.OK:
            primary = (answer.election_id.high, answer.election_id.low)
            self.close()
            raise NotPrimaryError(
                f"switch {self.name}: not primary with election id {self.election_id}; "
                f"primary holds {primary} ({answer.status.message})")

    def _decode_packet_in(self, packet: p4runtime_pb2.PacketIn) -> PacketIn:
        names = {}
        if self.p4info is not None:
            names = {m.id: m.name for m in self.p4info.packet_metadata("packet_in")}
        return PacketIn(packet.payload,
                        {names.get(m.metadata_id, str(m.metadata_id)): decode(m.value)
                         for m in packet.metadata})

    # ------------------------------------------------------------------- pipeline

    def set_pipeline(self, p4info_path: Path | str | P4Info, bmv2_json_path: Path | str,
                     cookie: int | None = None) -> None:
        """SetForwardingPipelineConfig(VERIFY_AND_COMMIT) with the P4Info and bmv2 JSON;
        `cookie` (64 bits) names the program version, read back by fetch_pipeline_cookie."""
        info = p4info_path if isinstance(p4info_path, P4Info) else P4Info.from_file(p4info_path)
        request = p4runtime_pb2.SetForwardingPipelineConfigRequest(
            device_id=self.device_id, election_id=_uint128(self.election_id),
            action=p4runtime_pb2.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT)
        request.config.p4info.CopyFrom(info.proto)
        request.config.p4_device_config = Path(bmv2_json_path).read_bytes()
        if cookie is not None:
            request.config.cookie.cookie = cookie
        self._call("SetForwardingPipelineConfig", request, timeout=self.pipeline_timeout)
        self.p4info = info

    def fetch_pipeline(self) -> P4Info | None:
        """The P4Info of the pipeline the switch runs (None if it runs none); kept as
        this connection's P4Info."""
        request = p4runtime_pb2.GetForwardingPipelineConfigRequest(
            device_id=self.device_id,
            response_type=p4runtime_pb2.GetForwardingPipelineConfigRequest.P4INFO_AND_COOKIE)
        try:
            config = self._stub.GetForwardingPipelineConfig(request, timeout=self.timeout)
        except grpc.RpcError as exc:
            if exc.code() == grpc.StatusCode.FAILED_PRECONDITION:
                return None  # no forwarding pipeline config yet
            raise SwitchConnectionError(
                f"switch {self.name}: GetForwardingPipelineConfig failed: "
                f"{exc.code().name}: {exc.details()}") from None
        if not config.config.p4info.tables:
            return None
        self.p4info = P4Info(config.config.p4info)
        return self.p4info

    def fetch_pipeline_config(self) -> p4runtime_pb2.ForwardingPipelineConfig | None:
        """The P4Info and cookie of the pipeline the switch runs, as the switch answers
        (None if it runs none); unlike fetch_pipeline, this connection's P4Info stays."""
        request = p4runtime_pb2.GetForwardingPipelineConfigRequest(
            device_id=self.device_id,
            response_type=p4runtime_pb2.GetForwardingPipelineConfigRequest.P4INFO_AND_COOKIE)
        try:
            answer = self._stub.GetForwardingPipelineConfig(request, timeout=self.timeout)
        except grpc.RpcError as exc:
            if exc.code() == grpc.StatusCode.FAILED_PRECONDITION:
                return None
            raise SwitchConnectionError(
                f"switch {self.name}: GetForwardingPipelineConfig failed: "
                f"{exc.code().name}: {exc.details()}") from None
        return answer.config if answer.config.p4info.tables else None

    def use_p4info(self, p4info_path: Path | str) -> None:
        """Adopt the P4Info of a pipeline that is already on the switch."""
        self.p4info = P4Info.from_file(p4info_path)

    def _call(self, method: str, request, timeout: float | None = None):
        try:
            return getattr(self._stub, method)(request, timeout=timeout or self.timeout)
        except grpc.RpcError as exc:
            raise SwitchRpcError(f"switch {self.name}: {method} failed: {exc.code().name}: "
                                 f"{exc.details()}") from None

    # --------------------------------------------------------------------- writes

    @staticmethod
    def insert(entry: p4runtime_pb2.TableEntry) -> p4runtime_pb2.Update:
        return p4runtime_pb2.Update(type=p4runtime_pb2.Update.INSERT,
                                    entity=p4runtime_pb2.Entity(table_entry=entry))

    @staticmethod
    def modify(entry: p4runtime_pb2.TableEntry) -> p4runtime_pb2.Update:
        return p4runtime_pb2.Update(type=p4runtime_pb2.Update.MODIFY,
                                    entity=p4runtime_pb2.Entity(table_entry=entry))

    @staticmethod
    def delete(entry: p4runtime_pb2.TableEntry) -> p4runtime_pb2.Update:
        return p4runtime_pb2.Update(type=p4runtime_pb2.Update.DELETE,
                                    entity=p4runtime_pb2.Entity(table_entry=entry))

    @staticmethod
    def vl_arbitration_update(port: int, table: VlArbitration,
                              kind: int = p4runtime_pb2.Update.INSERT) -> p4runtime_pb2.Update:
        """The port's VL arbitration table as the embedded switch's extern entry
        (traffic/vl_arbitration.py); simple_switch_grpc refuses it (UNIMPLEMENTED)."""
        body = struct_pb2.Struct()
        body.update(table.as_dict())
        entry = p4runtime_pb2.ExternEntry(extern_type_id=P4RUNTIME_EXTERN_TYPE_ID,
                                          extern_id=port)
        entry.entry.Pack(body)
        return p4runtime_pb2.Update(type=kind, entity=p4runtime_pb2.Entity(extern_entry=entry))

    def write(self, updates: Sequence[p4runtime_pb2.Update],
              atomicity: int = p4runtime_pb2.WriteRequest.CONTINUE_ON_ERROR,
              batch_size: int = WRITE_BATCH) -> None:
        """Send updates in batches; raise SwitchWriteError listing every rejected one."""
        failures: list[tuple[str, str, str]] = []
        for start in range(0, len(updates), batch_size):
            batch = updates[start:start + batch_size]
            request = p4runtime_pb2.WriteRequest(
                device_id=self.device_id, election_id=_uint128(self.election_id),
                atomicity=atomicity, role=self.role)
            request.updates.extend(batch)
            try:
                self._stub.Write(request, timeout=self.timeout)
            except grpc.RpcError as exc:
                failures.extend(self._write_failures(exc, batch))
        if failures:
            raise SwitchWriteError(self.name, failures)

    def _write_failures(self, exc: grpc.RpcError,
                        batch: Sequence[p4runtime_pb2.Update]) -> list[tuple[str, str, str]]:
        details = _p4_errors(exc)
        if len(details) != len(batch):  # not per-update: the whole batch failed
            return [(f"batch of {len(batch)} update(s)", exc.code().name, exc.details() or "")]
        failed = []
        for update, error in zip(batch, details, strict=True):
            if error.canonical_code != code_pb2.OK:
                what = (f"{p4runtime_pb2.Update.Type.Name(update.type)} "
                        f"{self._describe(update.entity)}")
                failed.append((what, code_pb2.Code.Name(error.canonical_code), error.message))
        return failed

    def _describe(self, entity: p4runtime_pb2.Entity) -> str:
        if self.p4info is not None and entity.HasField("table_entry"):
            return self.p4info.describe(entity)
        if self.p4info is not None and entity.HasField("register_entry"):
            r = entity.register_entry
            return (f"{self.p4info.name(r.register_id)}[{r.index.index}] = "
                    f"{decode(r.data.bitstring)}")
        return entity.WhichOneof("entity") or "entity"

    # ---------------------------------------------------------------------- reads

    def read(self, entities: Iterable[p4runtime_pb2.Entity]) -> list[p4runtime_pb2.Entity]:
        request = p4runtime_pb2.ReadRequest(device_id=self.device_id)
        request.entities.extend(entities)
        try:
            return [e for response in self._stub.Read(request, timeout=self.timeout)
                    for e in response.entities]
        except grpc.RpcError as exc:
            raise SwitchRpcError(f"switch {self.name}: Read failed: {exc.code().name}: "
                                 f"{exc.details()}") from None

    def read_table_entries(self, table: str | None = None) -> list[p4runtime_pb2.TableEntry]:
        """Every entry of `table` (of all tables when None)."""
        entry = p4runtime_pb2.TableEntry()
        if table is not None:
            entry.table_id = self._require_p4info().table(table).id
        return [e.table_entry for e in self.read([p4runtime_pb2.Entity(table_entry=entry)])]

    def read_counter(self, name: str, index: int) -> tuple[int, int]:
        """(packets, bytes) of one cell of an indirect counter."""
        return self.read_counters(name, index).get(index, (0, 0))

    def read_counters(self, name: str, index: int | None = None,
                      indices: list[int] | None = None) -> dict[int, tuple[int, int]]:
        """{index: (packets, bytes)} of an indirect counter: one index, the given
        indices (one request), or all when neither is given."""
        counter_id = self._require_p4info().counter(name).id
        wanted = [index] if index is not None else indices
        if wanted is None:
            requests = [p4runtime_pb2.Entity(counter_entry=p4runtime_pb2.CounterEntry(
                counter_id=counter_id))]
        else:
            requests = []
            for i in wanted:
                entry = p4runtime_pb2.CounterEntry(counter_id=counter_id)
                entry.index.index = i
                requests.append(p4runtime_pb2.Entity(counter_entry=entry))
        entities = self.read(requests)
        return {e.counter_entry.index.index: (e.counter_entry.data.packet_count,
                                              e.counter_entry.data.byte_count)
                for e in entities}

    def read_register(self, name: str, index: int | None = None,
                      indices: list[int] | None = None) -> dict[int, int]:
        """{index: value} of a register: one cell, the given cells (one request), or all."""
        register_id = self._require_p4info().register(name).id
        wanted = [index] if index is not None else indices
        entities = []
        for i in wanted if wanted is not None else [None]:
            entry = p4runtime_pb2.RegisterEntry(register_id=register_id)
            if i is not None:
                entry.index.index = i
            entities.append(p4runtime_pb2.Entity(register_entry=entry))
        return {e.register_entry.index.index: decode(e.register_entry.data.bitstring)
                for e in self.read(entities)}

    def _require_p4info(self) -> P4Info:
        if self.p4info is None:
            raise SwitchRpcError(f"switch {self.name}: no P4Info yet (set_pipeline first)")
        return self.p4info

    # ----------------------------------------------------------------- packet I/O

    def packet_out(self, payload: bytes, metadata: dict[str, int]) -> None:
        """Send a frame through the switch's CPU port; packet_out header fields by name.

        Fields not given are sent as 0 (a switch may insist on every field).
        """
        fields = self._require_p4info().packet_metadata("packet_out")
        unknown = set(metadata) - {m.name for m in fields}
        if unknown:
            raise KeyError(f"packet_out has no field(s) {sorted(unknown)}; "
                           f"it has {[m.name for m in fields]}")
        request = p4runtime_pb2.StreamMessageRequest()
        request.packet.payload = payload
        for m in fields:
            request.packet.metadata.add(metadata_id=m.id,
                                        value=encode(metadata.get(m.name, 0), m.bitwidth))
        self._requests.put(request)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._requests.put(None)
        self._channel.close()

    def __enter__(self) -> SwitchConnection:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _p4_errors(exc: grpc.RpcError) -> list[p4runtime_pb2.Error]:
    """The per-update p4.v1.Error list carried in a Write error's status details."""
    for key, value in exc.trailing_metadata() or ():
        if key == "grpc-status-details-bin":
            status = status_pb2.Status.FromString(value)
            errors = []
            for detail in status.details:
                error = p4runtime_pb2.Error()
                if detail.Unpack(error):
                    errors.append(error)
            return errors
    return []
