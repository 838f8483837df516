"""An in-memory P4Runtime server for the controller's unit tests.

It keeps what the spec requires a switch to keep for the calls the controller
makes (arbitration by election id, the pipeline, table entries by key, counter
cells) and answers Write errors the way the spec says: per-update p4.v1.Error
details in the gRPC status. It executes no program; the loopback tests against
the embedded switch cover that.
"""

from __future__ import annotations

import queue
import threading
import time
from concurrent import futures

import grpc
from google.protobuf import any_pb2
from google.rpc import code_pb2, status_pb2
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc


def _eid(u: p4runtime_pb2.Uint128) -> tuple[int, int]:
    return (u.high, u.low)


class FakeP4RuntimeServer(p4runtime_pb2_grpc.P4RuntimeServicer):
    def __init__(self, device_id: int = 1) -> None:
        self.device_id = device_id
        self.config: p4runtime_pb2.ForwardingPipelineConfig | None = None
        self.entries: dict[bytes, p4runtime_pb2.TableEntry] = {}
        self.counters: dict[tuple[int, int], tuple[int, int]] = {}  # (id, index) -> (pkts, bytes)
        self.packet_outs: list[p4runtime_pb2.PacketOut] = []
        self.registers: dict[tuple[int, int], bytes] = {}  # (id, index) -> bitstring
        self.register_writes: list[tuple[int, int, bytes]] = []  # attempts, all refused
        self.defaults: dict[int, p4runtime_pb2.TableEntry] = {}  # table id -> default entry
        self.write_requests = 0
        self.updates_seen = 0
        self.reject_dlids: set[bytes] = set()  # exact values a Write refuses (a broken switch)
        self.pipeline_delay_s = 0.0  # how long a pipeline push takes (a busy switch)
        self.packet_out_handler = None  # called with each PacketOut (wiring between fakes)
        self._primary: tuple[int, int] | None = None
        self._primary_out: queue.Queue | None = None
        self._lock = threading.Lock()
        self._server: grpc.Server | None = None
        self.port = 0

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> str:
        self._executor = futures.ThreadPoolExecutor(max_workers=8)
        self._server = grpc.server(self._executor)
        p4runtime_pb2_grpc.add_P4RuntimeServicer_to_server(self, self._server)
        self.port = self._server.add_insecure_port("127.0.0.1:0")
        self._server.start()
        return f"127.0.0.1:{self.port}"

    def stop(self) -> None:
        if self._server:
            self._server.stop(grace=None).wait(5)
            self._executor.shutdown(wait=False)

    # --------------------------------------------------------------------- stream
    def StreamChannel(self, request_iterator, context):  # noqa: N802
        out: queue.Queue = queue.Queue()

        def consume():
            try:
                serve(request_iterator)
            except grpc.RpcError:  # the client went away
                pass
            out.put(None)

        def serve(requests):
            for request in requests:
                which = request.WhichOneof("update")
                if which == "arbitration":
                    eid = _eid(request.arbitration.election_id)
                    with self._lock:
                        if self._primary is None or eid >= self._primary:
                            self._primary, self._primary_out = eid, out
                            code = code_pb2.OK
                        else:
                            code = code_pb2.ALREADY_EXISTS
                        answer = p4runtime_pb2.StreamMessageResponse()
                        answer.arbitration.CopyFrom(request.arbitration)
                        answer.arbitration.election_id.high = self._primary[0]
                        answer.arbitration.election_id.low = self._primary[1]
                        answer.arbitration.status.code = code
                    out.put(answer)
                elif which == "packet":
                    self.packet_outs.append(request.packet)
                    if self.packet_out_handler is not None:
                        self.packet_out_handler(request.packet)

        threading.Thread(target=consume, daemon=True).start()
        while True:
            item = out.get()
            if item is None:
                with self._lock:
                    if self._primary_out is out:
                        self._primary, self._primary_out = None, None
                return
            yield item

    def send_packet_in(self, payload: bytes, metadata: dict[int, bytes]) -> None:
        response = p4runtime_pb2.StreamMessageResponse()
        response.packet.payload = payload
        for mid, value in metadata.items():
            response.packet.metadata.add(metadata_id=mid, value=value)
        self._primary_out.put(response)

    # ------------------------------------------------------------------- pipeline
    def SetForwardingPipelineConfig(self, request, context):  # noqa: N802
        if _eid(request.election_id) != self._primary:
            context.abort(grpc.StatusCode.PERMISSION_DENIED, "not primary")
        time.sleep(self.pipeline_delay_s)
        self.config = request.config
        self.entries.clear()
        return p4runtime_pb2.SetForwardingPipelineConfigResponse()

    # --------------------------------------------------------------------- writes
    def Write(self, request, context):  # noqa: N802
        if _eid(request.election_id) != self._primary:
            context.abort(grpc.StatusCode.PERMISSION_DENIED, "not primary")
        self.write_requests += 1
        errors = []
        for update in request.updates:
            self.updates_seen += 1
            errors.append(self._apply(update))
        if any(e.canonical_code != code_pb2.OK for e in errors):
            status = status_pb2.Status(code=code_pb2.UNKNOWN, message="write failed")
            for e in errors:
                detail = any_pb2.Any()
                detail.Pack(e)
                status.details.append(detail)
            context.set_trailing_metadata(
                (("grpc-status-details-bin", status.SerializeToString()),))
            context.set_code(grpc.StatusCode.UNKNOWN)
            context.set_details("write failed")
        return p4runtime_pb2.WriteResponse()

    def _apply(self, update: p4runtime_pb2.Update) -> p4runtime_pb2.Error:
        if update.entity.HasField("register_entry"):
            # as bmv2's simple_switch_grpc (and the embedded switch) answer
            with self._lock:
                r = update.entity.register_entry
                self.register_writes.append((r.register_id, r.index.index, r.data.bitstring))
            return p4runtime_pb2.Error(canonical_code=code_pb2.UNIMPLEMENTED,
                                       message="Register writes are not supported yet")
        if update.entity.table_entry.is_default_action:
            if update.type != p4runtime_pb2.Update.MODIFY:
                return p4runtime_pb2.Error(canonical_code=code_pb2.INVALID_ARGUMENT,
                                           message="default entries only take MODIFY")
            with self._lock:
                self.defaults[update.entity.table_entry.table_id] = update.entity.table_entry
            return p4runtime_pb2.Error(canonical_code=code_pb2.OK)
        entry = update.entity.table_entry
        key_entry = p4runtime_pb2.TableEntry(table_id=entry.table_id, priority=entry.priority)
        key_entry.match.extend(sorted(entry.match, key=lambda m: m.field_id))
        key = key_entry.SerializeToString()
        for m in entry.match:
            if m.exact.value in self.reject_dlids:
                return p4runtime_pb2.Error(canonical_code=code_pb2.RESOURCE_EXHAUSTED,
                                           message="table full")
        with self._lock:
            if update.type == p4runtime_pb2.Update.INSERT:
                if key in self.entries:
                    return p4runtime_pb2.Error(canonical_code=code_pb2.ALREADY_EXISTS,
                                               message="entry exists")
                self.entries[key] = entry
            elif update.type == p4runtime_pb2.Update.MODIFY:
                if key not in self.entries:
                    return p4runtime_pb2.Error(canonical_code=code_pb2.NOT_FOUND,
                                               message="no such entry")
                self.entries[key] = entry
            elif update.type == p4runtime_pb2.Update.DELETE:
                if self.entries.pop(key, None) is None:
                    return p4runtime_pb2.Error(canonical_code=code_pb2.NOT_FOUND,
                                               message="no such entry")
        return p4runtime_pb2.Error(canonical_code=code_pb2.OK)

    # ---------------------------------------------------------------------- reads
    def Read(self, request, context):  # noqa: N802
        response = p4runtime_pb2.ReadResponse()
        for entity in request.entities:
            which = entity.WhichOneof("entity")
            if which == "table_entry":
                tid = entity.table_entry.table_id
                if entity.table_entry.is_default_action:
                    default = self.defaults.get(tid, p4runtime_pb2.TableEntry(
                        table_id=tid, is_default_action=True))
                    response.entities.add().table_entry.CopyFrom(default)
                    continue
                for entry in list(self.entries.values()):
                    if tid in (0, entry.table_id):
                        response.entities.add().table_entry.CopyFrom(entry)
            elif which == "counter_entry":
                want = entity.counter_entry
                for (cid, index), (pkts, nbytes) in sorted(self.counters.items()):
                    if cid != want.counter_id:
                        continue
                    if want.HasField("index") and want.index.index != index:
                        continue
                    ce = response.entities.add().counter_entry
                    ce.counter_id, ce.index.index = cid, index
                    ce.data.packet_count, ce.data.byte_count = pkts, nbytes
            elif which == "register_entry":
                want = entity.register_entry
                for (rid, index), value in sorted(self.registers.items()):
                    if rid != want.register_id:
                        continue
                    if want.HasField("index") and want.index.index != index:
                        continue
                    re_ = response.entities.add().register_entry
                    re_.register_id, re_.index.index = rid, index
                    re_.data.bitstring = value
        yield response
