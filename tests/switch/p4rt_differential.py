"""The same P4Runtime requests to the embedded switch's server and to simple_switch_grpc,
and their answers in one comparable form.

Both run `data/p4rt_fidelity.p4` (one object of each kind), compiled by the embedded
compiler, with no ports. `Target.embedded()` needs nothing; `Target.bmv2()` needs
simple_switch_grpc on PATH (DEVELOPERS.md). An answer is `outcome(...)`: "OK" plus what a
Read returned, or the gRPC code plus each update's canonical code for a failed Write."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

import grpc
from google.protobuf import text_format
from google.rpc import code_pb2
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2
from test_p4runtime_support import DEVICE_ID, Client, write_errors

PROGRAM = Path(__file__).parent / "data" / "p4rt_fidelity.p4"
CPU_PORT = 510
TE = p4runtime_pb2.TableEntry


def compile_program() -> tuple[bytes, p4info_pb2.P4Info]:
    """(bmv2 JSON, P4Info) of data/p4rt_fidelity.p4."""
    from p4compiler.compiler import compile_file

    result = compile_file(str(PROGRAM))
    info = p4info_pb2.P4Info()
    info.CopyFrom(result.p4info)
    return json.dumps(result.json).encode(), info


def ids(info: p4info_pb2.P4Info) -> dict[str, int]:
    """Short name (after the last dot) -> id of every table, action and extern; an action
    profile, which p4c names after its table, as "profile:<name>"."""
    out = {}
    for kind in ("tables", "actions", "counters", "direct_counters", "meters",
                 "direct_meters", "registers"):
        for obj in getattr(info, kind):
            out[obj.preamble.name.rsplit(".", 1)[-1]] = obj.preamble.id
    for obj in info.action_profiles:  # named after their table: "profile:<table>"
        out["profile:" + obj.preamble.name.rsplit(".", 1)[-1]] = obj.preamble.id
    return out


@dataclass
class Target:
    """One running P4Runtime server holding the program, and a primary client on it."""

    name: str
    address: str
    client: Client
    _stop: object

    @classmethod
    def embedded(cls) -> Target:
        from p4switch.p4runtime_server import serve
        from p4switch.switch import Switch

        sw = Switch(ports={}, cpu_port=CPU_PORT, device_id=DEVICE_ID)
        server = serve(sw, "127.0.0.1:0", DEVICE_ID, CPU_PORT)
        return cls._connect("embedded", f"127.0.0.1:{server.port}", lambda: server.stop(None))

    @classmethod
    def bmv2(cls) -> Target:
        from topologies.ports import free_tcp_port

        address = f"127.0.0.1:{free_tcp_port()}"
        proc = subprocess.Popen(
            ["simple_switch_grpc", "--device-id", str(DEVICE_ID), "--no-p4", "--",
             "--grpc-server-addr", address, "--cpu-port", str(CPU_PORT)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

        def stop():
            proc.terminate()  # the process this target started, by its handle
            proc.wait(timeout=10)
        try:
            channel = grpc.insecure_channel(address)
            grpc.channel_ready_future(channel).result(timeout=10)
            channel.close()
            return cls._connect("bmv2", address, stop)
        except BaseException:
            stop()
            raise

    @classmethod
    def _connect(cls, name: str, address: str, stop) -> Target:
        client = Client(address)
        client.primary()
        return cls(name, address, client, stop)

    def push(self, config: bytes, info: p4info_pb2.P4Info) -> None:
        self.client.set_pipeline(info=info, config=config)

    def close(self) -> None:
        self.client.close()
        self._stop()


def outcome(call) -> tuple:
    """The comparable answer of `call()`: ("OK", entities read or None) or
    (gRPC code name, per-update canonical code names of a failed Write)."""
    try:
        result = call()
    except grpc.RpcError as e:
        if e.code() == grpc.StatusCode.UNKNOWN and _has_details(e):
            return ("UNKNOWN", tuple(code_pb2.Code.Name(x.canonical_code)
                                     for x in write_errors(e)))
        return (e.code().name,)
    if isinstance(result, list):
        return ("OK", tuple(text_format.MessageToString(x, as_one_line=True) for x in result))
    return ("OK",)


def _has_details(e: grpc.RpcError) -> bool:
    return any(k == "grpc-status-details-bin" for k, _ in e.trailing_metadata() or ())


def compare(targets: list[Target], steps) -> list[tuple]:
    """Run each step (a function of a Client) on every target in turn; the list of
    (step index, {target: answer}) where the answers differ."""
    diffs = []
    for i, step in enumerate(steps):
        answers = {t.name: outcome(lambda t=t, step=step: step(t.client)) for t in targets}
        if len(set(answers.values())) > 1:
            diffs.append((i, answers))
    return diffs


def read(**entity):
    """A step: Read of one entity (keyword: its kind)."""
    return lambda c: c.read(p4runtime_pb2.Entity(**entity))


def write(*updates, **kw):
    """A step: one Write of these updates."""
    return lambda c: c.write(*updates, **kw)


class Requests:
    """Entities of data/p4rt_fidelity.p4, built by name."""

    def __init__(self, info: p4info_pb2.P4Info):
        self.ids = ids(info)

    def entry(self, table: str, action: str | None = None, params=(), priority=0,
              **kw) -> TE:
        te = TE(table_id=self.ids[table], priority=priority, **kw)
        if action:
            te.action.action.action_id = self.ids[action]
            for i, value in enumerate(params, 1):
                te.action.action.params.add(param_id=i, value=value)
        return te

    def exact(self, value=b"\x08\x00", action="forward_counted", params=(b"\x01",), **kw) -> TE:
        te = self.entry("exact_t", action, params, **kw)
        te.match.add(field_id=1).exact.value = value
        return te

    def ternary(self, value: bytes, mask: bytes, priority=10, action="metered",
                params=(b"\x01",)) -> TE:
        te = self.entry("ternary_t", action, params, priority)
        fm = te.match.add(field_id=1)
        fm.ternary.value, fm.ternary.mask = value, mask
        return te

    def lpm(self, value: bytes, prefix_len: int, **kw) -> TE:
        te = self.entry("lpm_t", "forward", (b"\x01",), **kw)
        fm = te.match.add(field_id=1)
        fm.lpm.value, fm.lpm.prefix_len = value, prefix_len
        return te

    def range(self, low: bytes | None, high: bytes | None, optional: bytes | None = None,
              priority=10) -> TE:
        te = self.entry("range_t", "set_cls", (b"\x01",), priority)
        if low is not None:
            fm = te.match.add(field_id=1)
            fm.range.low, fm.range.high = low, high
        if optional is not None:
            te.match.add(field_id=2).optional.value = optional
        return te

    def default(self, table: str, action: str | None = None, params=()) -> TE:
        te = self.entry(table, action, params)
        te.is_default_action = True
        return te

    def counter(self, name: str | None = None, index: int | None = None):
        ce = p4runtime_pb2.CounterEntry(counter_id=self.ids[name] if name else 0)
        if index is not None:
            ce.index.index = index
        return ce

    def meter(self, name: str | None = None, index: int | None = None, config=None):
        me = p4runtime_pb2.MeterEntry(meter_id=self.ids[name] if name else 0)
        if index is not None:
            me.index.index = index
        if config:
            me.config.cir, me.config.cburst, me.config.pir, me.config.pburst = config
        return me


    def member(self, profile: str, member_id: int, action="forward", params=(b"\x01",)):
        m = p4runtime_pb2.ActionProfileMember(action_profile_id=self.ids["profile:" + profile],
                                              member_id=member_id)
        if action:
            m.action.action_id = self.ids[action]
            for i, value in enumerate(params, 1):
                m.action.params.add(param_id=i, value=value)
        return m

    def group(self, profile: str, group_id: int, *members: int, max_size=0, weight=1):
        g = p4runtime_pb2.ActionProfileGroup(action_profile_id=self.ids["profile:" + profile],
                                             group_id=group_id, max_size=max_size)
        for m in members:
            g.members.add(member_id=m, weight=weight)
        return g


def mc_group(group_id: int, *replicas: tuple[int, int]) -> p4runtime_pb2.PacketReplicationEngineEntry:
    pre = p4runtime_pb2.PacketReplicationEngineEntry()
    pre.multicast_group_entry.multicast_group_id = group_id
    for port, instance in replicas:
        pre.multicast_group_entry.replicas.add(egress_port=port, instance=instance)
    return pre


def clone_session(session_id: int, *replicas: tuple[int, int], class_of_service=0,
                  packet_length_bytes=0) -> p4runtime_pb2.PacketReplicationEngineEntry:
    pre = p4runtime_pb2.PacketReplicationEngineEntry()
    s = pre.clone_session_entry
    s.session_id, s.class_of_service = session_id, class_of_service
    s.packet_length_bytes = packet_length_bytes
    for port, instance in replicas:
        s.replicas.add(egress_port=port, instance=instance)
    return pre

