"""The embedded switch's P4Runtime server (P4Runtime spec v1.4, p4runtime 1.4.1 protos).

`serve()` starts a gRPC server for one device on top of any
`runtime_api.Dataplane`; `P4RuntimeServicer` is the service itself, usable in
tests with a fake data plane. See docs/p4runtime.md for what is supported.
"""

from __future__ import annotations

import json
import logging
import queue
import threading
import time
from concurrent import futures

import grpc
from google.protobuf import any_pb2
from google.rpc import code_pb2, status_pb2
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

from .p4runtime import packetio
from .p4runtime.arbitration import Arbitrator, Controller, election_id_of
from .p4runtime.digests import DigestEngine
from .p4runtime.errors import (
    P4RuntimeError,
    failed_precondition,
    invalid,
    not_found,
    permission_denied,
    unimplemented,
)
from .p4runtime.p4info import PipelineInfo
from .p4runtime.port_status import PortStatus, PortStatusSubscribe
from .p4runtime.store import PipelineState
from .runtime_api import Dataplane

log = logging.getLogger("p4switch.p4runtime")

P4RUNTIME_API_VERSION = "1.4.1"
READ_CHUNK = 256  # entities per ReadResponse
STREAM_QUEUE_LIMIT = 4096  # packet-ins/digests buffered per slow stream before dropping

SetAction = p4runtime_pb2.SetForwardingPipelineConfigRequest
GetType = p4runtime_pb2.GetForwardingPipelineConfigRequest


class _Stream:
    """The outgoing side of one StreamChannel."""

    def __init__(self) -> None:
        self.queue: queue.Queue = queue.Queue()
        self.closed = False

    def send(self, msg: p4runtime_pb2.StreamMessageResponse, droppable: bool = False) -> None:
        if self.closed:
            return
        if droppable and self.queue.qsize() >= STREAM_QUEUE_LIMIT:
            return
        self.queue.put(msg)


class P4RuntimeServicer(p4runtime_pb2_grpc.P4RuntimeServicer):
    def __init__(self, dataplane: Dataplane, device_id: int, cpu_port: int | None = None):
        self.dp = dataplane
        self.device_id = device_id
        self.cpu_port = cpu_port
        self._lock = threading.RLock()
        self.arbitrator = Arbitrator(device_id)
        self.state: PipelineState | None = None
        self.config: p4runtime_pb2.ForwardingPipelineConfig | None = None
        self._saved: tuple[p4runtime_pb2.ForwardingPipelineConfig, PipelineInfo, dict] | None = None
        self._streams: dict[Controller, _Stream] = {}
        self._port_up: dict[int, bool] = {}
        self.digests = DigestEngine(lambda msg: self._to_primaries(msg))
        if cpu_port is not None:
            dataplane.set_packet_in_handler(self._on_packet_in)
        dataplane.set_digest_handler(self._on_digest)
        dataplane.set_port_status_handler(self._on_port_status)

    # ------------------------------------------------------------------ helpers
    def _check_device(self, device_id: int) -> None:
        if device_id != self.device_id:
            raise not_found(f"unknown device id {device_id} (this is device {self.device_id})")

    def _require_pipeline(self) -> PipelineState:
        if self.state is None:
            raise failed_precondition("no forwarding pipeline config has been set")
        return self.state

    @staticmethod
    def _abort(context, err: P4RuntimeError):
        context.abort(err.grpc_code, err.message)

    # ------------------------------------------------------------------ Capabilities
    def Capabilities(self, request, context):
        return p4runtime_pb2.CapabilitiesResponse(p4runtime_api_version=P4RUNTIME_API_VERSION)

    # ------------------------------------------------------------------ pipeline config
    def SetForwardingPipelineConfig(self, request, context):
        try:
            self._set_pipeline(request)
        except P4RuntimeError as e:
            self._abort(context, e)
        return p4runtime_pb2.SetForwardingPipelineConfigResponse()

    def _verify(self, request) -> tuple[p4runtime_pb2.ForwardingPipelineConfig, PipelineInfo, dict]:
        if not request.HasField("config"):
            raise invalid("config is required")
        cfg = request.config
        try:
            program = json.loads(cfg.p4_device_config.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise invalid(f"p4_device_config is not a bmv2 JSON: {e}") from e
        info = PipelineInfo(cfg.p4info, program)
        verify = getattr(self.dp, "verify_program", None)
        if verify is not None:
            try:
                verify(program)
            except Exception as e:  # the data plane's ProgramError, whatever its class
                raise invalid(f"bmv2 JSON refused by the data plane: {e}") from e
        return cfg, info, program

    def _set_pipeline(self, request) -> None:
        self._check_device(request.device_id)
        self.arbitrator.check_primary(
            request.role, election_id_of(request), "SetForwardingPipelineConfig"
        )
        action = request.action
        with self._lock:
            if action == SetAction.VERIFY:
                self._verify(request)
            elif action == SetAction.VERIFY_AND_SAVE:
                self._saved = self._verify(request)
            elif action == SetAction.VERIFY_AND_COMMIT:
                self._commit(*self._verify(request), reconcile=False)
            elif action == SetAction.RECONCILE_AND_COMMIT:
                self._commit(*self._verify(request), reconcile=True)
            elif action == SetAction.COMMIT:
                if request.HasField("config"):
                    raise invalid("COMMIT takes no config: it commits the saved one")
                if self._saved is None:
                    raise failed_precondition("COMMIT: no config saved by VERIFY_AND_SAVE")
                self._commit(*self._saved, reconcile=False)
            else:
                raise invalid(f"unsupported SetForwardingPipelineConfig action {action}")

    def _commit(self, cfg, info: PipelineInfo, program: dict, reconcile: bool) -> None:
        try:
            self.dp.load_program(program)
        except Exception as e:
            raise invalid(f"bmv2 JSON refused by the data plane: {e}") from e
        old = self.state
        self.digests.reset()
        state = PipelineState(info, self.dp)
        state.on_digest_config = lambda did, entry: self.digests.configure(info.digests[did], entry)
        if reconcile and old is not None:
            old.replay_into(state)
        self.state = state
        self.config = p4runtime_pb2.ForwardingPipelineConfig()
        self.config.CopyFrom(cfg)
        self._saved = None
        log.info("pipeline committed: %d tables, %d actions", len(info.tables), len(info.actions))

    def GetForwardingPipelineConfig(self, request, context):
        try:
            self._check_device(request.device_id)
            with self._lock:
                if self.config is None:
                    raise failed_precondition("no forwarding pipeline config has been set")
                cfg = self.config
                out = p4runtime_pb2.GetForwardingPipelineConfigResponse()
                if cfg.HasField("cookie"):
                    out.config.cookie.CopyFrom(cfg.cookie)
                t = request.response_type
                if t in (GetType.ALL, GetType.P4INFO_AND_COOKIE):
                    out.config.p4info.CopyFrom(cfg.p4info)
                if t in (GetType.ALL, GetType.DEVICE_CONFIG_AND_COOKIE):
                    out.config.p4_device_config = cfg.p4_device_config
                if t not in (GetType.ALL, GetType.COOKIE_ONLY, GetType.P4INFO_AND_COOKIE,
                             GetType.DEVICE_CONFIG_AND_COOKIE):
                    raise invalid(f"unknown response_type {t}")
                return out
        except P4RuntimeError as e:
            self._abort(context, e)

    # ------------------------------------------------------------------ Write
    def Write(self, request, context):
        try:
            self._check_device(request.device_id)
            self.arbitrator.check_primary(request.role, election_id_of(request), "Write")
            atomicity = request.atomicity
            if atomicity == p4runtime_pb2.WriteRequest.DATAPLANE_ATOMIC:
                raise unimplemented("DATAPLANE_ATOMIC is not supported")
            if atomicity not in (p4runtime_pb2.WriteRequest.CONTINUE_ON_ERROR,
                                 p4runtime_pb2.WriteRequest.ROLLBACK_ON_ERROR):
                raise invalid(f"unknown atomicity {atomicity}")
            with self._lock:
                state = self._require_pipeline()
                errors = self._apply(state, request.updates,
                                     rollback=atomicity == p4runtime_pb2.WriteRequest.ROLLBACK_ON_ERROR)
        except P4RuntimeError as e:
            self._abort(context, e)
        if any(e.canonical_code != code_pb2.OK for e in errors):
            status = status_pb2.Status(
                code=code_pb2.UNKNOWN,
                message=f"{sum(e.canonical_code != code_pb2.OK for e in errors)} of "
                        f"{len(errors)} updates failed",
            )
            for err in errors:
                status.details.add().Pack(err)
            context.set_trailing_metadata((("grpc-status-details-bin", status.SerializeToString()),))
            context.set_code(grpc.StatusCode.UNKNOWN)
            context.set_details(status.message + ": " + "; ".join(
                e.message for e in errors if e.canonical_code != code_pb2.OK))
        return p4runtime_pb2.WriteResponse()

    @staticmethod
    def _apply(state: PipelineState, updates, rollback: bool) -> list[p4runtime_pb2.Error]:
        errors: list[p4runtime_pb2.Error] = []
        undos = []
        for upd in updates:
            try:
                undos.append(state.write(upd))
                errors.append(p4runtime_pb2.Error(canonical_code=code_pb2.OK))
            except P4RuntimeError as e:
                errors.append(p4runtime_pb2.Error(canonical_code=e.code, message=e.message))
            except Exception as e:  # a bug or a data-plane crash must not kill the server
                log.exception("write failed")
                errors.append(p4runtime_pb2.Error(canonical_code=code_pb2.INTERNAL, message=repr(e)))
            if rollback and errors[-1].canonical_code != code_pb2.OK:
                break
        if rollback and errors and errors[-1].canonical_code != code_pb2.OK:
            for undo in reversed(undos):
                try:
                    undo()
                except Exception:
                    log.exception("rollback step failed")
            for e in errors[:-1]:
                e.canonical_code, e.message = code_pb2.ABORTED, "rolled back"
            errors += [p4runtime_pb2.Error(canonical_code=code_pb2.ABORTED, message="not applied")
                       for _ in range(len(updates) - len(errors))]
        return errors

    # ------------------------------------------------------------------ Read
    def Read(self, request, context):
        try:
            self._check_device(request.device_id)
            with self._lock:
                state = self._require_pipeline()
                found = [e for entity in request.entities for e in state.read(entity)]
        except P4RuntimeError as e:
            self._abort(context, e)
        if not found:
            yield p4runtime_pb2.ReadResponse()
        for i in range(0, len(found), READ_CHUNK):
            yield p4runtime_pb2.ReadResponse(entities=found[i:i + READ_CHUNK])

    # ------------------------------------------------------------------ StreamChannel
    def StreamChannel(self, request_iterator, context):
        stream = _Stream()
        ctl = Controller(send=stream.send, peer=context.peer())
        with self._lock:
            self._streams[ctl] = stream
        context.add_callback(lambda: stream.queue.put(None))
        reader = threading.Thread(
            target=self._read_stream, args=(request_iterator, ctl, stream),
            name="p4rt-stream", daemon=True,
        )
        reader.start()
        try:
            while True:
                item = stream.queue.get()
                if item is None:
                    return
                if isinstance(item, P4RuntimeError):
                    self._abort(context, item)
                yield item
        finally:
            stream.closed = True
            with self._lock:
                self._streams.pop(ctl, None)
            self.arbitrator.remove(ctl)

    def _read_stream(self, request_iterator, ctl: Controller, stream: _Stream) -> None:
        try:
            for req in request_iterator:
                try:
                    self._handle_stream_request(ctl, stream, req)
                except P4RuntimeError as e:
                    stream.queue.put(e)  # ends the stream with this status
                    return
        except grpc.RpcError:
            pass
        except Exception:
            log.exception("stream reader failed")
        stream.queue.put(None)

    def _handle_stream_request(self, ctl: Controller, stream: _Stream, req) -> None:
        which = req.WhichOneof("update")
        if which == "arbitration":
            self.arbitrator.update(ctl, req.arbitration)
        elif which == "packet":
            self._packet_out(ctl, stream, req.packet)
        elif which == "digest_ack":
            if self.arbitrator.is_primary(ctl):
                self.digests.ack(req.digest_ack.digest_id, req.digest_ack.list_id)
        elif which == "other":
            if req.other.Is(PortStatusSubscribe.DESCRIPTOR) and ctl.arbitrated:
                with self._lock:
                    ctl.wants_port_status = True
                    for port, up in sorted(self._port_up.items()):
                        stream.send(_port_status_msg(port, up))
            else:
                err = p4runtime_pb2.StreamMessageResponse()
                err.error.canonical_code = code_pb2.UNIMPLEMENTED
                err.error.message = f"unsupported stream message {req.other.type_url}"
                err.error.other.other.CopyFrom(req.other)
                stream.send(err)

    def _packet_out(self, ctl: Controller, stream: _Stream, pkt: p4runtime_pb2.PacketOut) -> None:
        try:
            if not self.arbitrator.is_primary(ctl):
                raise permission_denied("packet-out from a controller that is not primary")
            state = self.state
            if state is None:
                raise failed_precondition("no forwarding pipeline config has been set")
            if self.cpu_port is None:
                raise failed_precondition("the switch has no CPU port (--cpu-port)")
            frame = packetio.packet_out_frame(state.info.packet_out, pkt)
            self.dp.packet_out(frame)
        except P4RuntimeError as e:
            err = p4runtime_pb2.StreamMessageResponse()
            err.error.canonical_code = e.code
            err.error.message = e.message
            err.error.packet_out.packet_out.CopyFrom(pkt)
            stream.send(err)

    # ------------------------------------------------------------------ data-plane events
    def _to_primaries(self, msg: p4runtime_pb2.StreamMessageResponse) -> None:
        for ctl in self.arbitrator.primaries():
            ctl.send(msg, droppable=True)

    def _on_packet_in(self, frame: bytes) -> None:
        state = self.state
        if state is None:
            return
        msg = p4runtime_pb2.StreamMessageResponse()
        msg.packet.CopyFrom(packetio.packet_in_message(state.info.packet_in, frame))
        self._to_primaries(msg)

    def _on_digest(self, name: str, values: tuple[int, ...]) -> None:
        state = self.state
        info = state.info.digests_by_name.get(name) if state else None
        if info is not None:
            self.digests.learn(info.id, tuple(values))

    def _on_port_status(self, port: int, up: bool) -> None:
        with self._lock:
            self._port_up[port] = up
            targets = [s for c, s in self._streams.items() if c.wants_port_status]
        for s in targets:
            s.send(_port_status_msg(port, up))

    def stop(self) -> None:
        self.digests.stop()
        self.dp.set_port_status_handler(None)
        with self._lock:
            for s in self._streams.values():
                s.queue.put(None)


def _port_status_msg(port: int, up: bool) -> p4runtime_pb2.StreamMessageResponse:
    msg = p4runtime_pb2.StreamMessageResponse()
    packed = any_pb2.Any()
    packed.Pack(PortStatus(port=port, up=up, timestamp_ns=time.time_ns()))
    msg.other.CopyFrom(packed)
    return msg


class P4RuntimeServer:
    """A running P4Runtime server: `port` (the bound one, useful with port 0),
    `servicer`, and `stop(grace)`."""

    def __init__(self, grpc_server: grpc.Server, servicer: P4RuntimeServicer,
                 executor: futures.ThreadPoolExecutor, port: int):
        self._grpc = grpc_server
        self._executor = executor
        self.servicer = servicer
        self.port = port

    def stop(self, grace: float | None = None) -> threading.Event:
        """gRPC's stop(grace), which also ends the streams, the digest thread and, once
        gRPC has stopped, the handler threads: a process that goes on after a server (a
        test session, a process that later forks) keeps none of its threads. Returns
        the event set when gRPC has stopped."""
        stopped = self._grpc.stop(grace)
        self.servicer.stop()

        def shut_down() -> None:
            stopped.wait()
            self._executor.shutdown(wait=False)
        threading.Thread(target=shut_down, name="p4rt-shutdown", daemon=True).start()
        return stopped


def serve(dataplane: Dataplane, address: str, device_id: int,
          cpu_port: int | None) -> P4RuntimeServer:
    """Start serving P4Runtime for `dataplane` on `address` ("host:port"); non-blocking.
    Raises OSError when the address cannot be bound.
    """
    servicer = P4RuntimeServicer(dataplane, device_id, cpu_port)
    executor = futures.ThreadPoolExecutor(max_workers=16, thread_name_prefix="p4rt")
    server = grpc.server(
        executor,
        options=[("grpc.so_reuseport", 0),
                 ("grpc.max_receive_message_length", 64 * 1024 * 1024),
                 ("grpc.max_send_message_length", 64 * 1024 * 1024)],
    )
    p4runtime_pb2_grpc.add_P4RuntimeServicer_to_server(servicer, server)
    try:
        port = server.add_insecure_port(address)
    except RuntimeError as e:
        raise OSError(f"cannot listen on {address}: {e}") from e
    if port == 0:
        raise OSError(f"cannot listen on {address}: address in use or invalid")
    server.start()
    return P4RuntimeServer(server, servicer, executor, port)
