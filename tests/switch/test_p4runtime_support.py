"""Shared pieces of the P4Runtime server tests: a small hand-written program
(P4Info + bmv2 JSON) with one object of every kind, an in-memory Dataplane, and
a thin P4Runtime client over a real gRPC channel on a free localhost port."""

from __future__ import annotations

import json
import queue
import threading

import grpc
from google.protobuf import text_format
from google.rpc import code_pb2, status_pb2
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

from p4switch.p4runtime_server import serve
from p4switch.runtime_api import DataplaneError

DEVICE_ID = 7
CPU_PORT = 64

P4INFO_TEXT = """
pkg_info { arch: "v1model" }
tables {
  preamble { id: 33554433 name: "FabricIngress.dlid_route" alias: "dlid_route" }
  match_fields { id: 1 name: "hdr.lrh.dlid" bitwidth: 16 match_type: EXACT }
  action_refs { id: 16777217 }
  action_refs { id: 16777218 }
  action_refs { id: 21257015 annotations: "@defaultonly" scope: DEFAULT_ONLY }
  direct_resource_ids: 318767105
  size: 1024
}
tables {
  preamble { id: 33554434 name: "FabricIngress.acl" alias: "acl" }
  match_fields { id: 1 name: "hdr.ethernet.src_addr" bitwidth: 48 match_type: TERNARY }
  match_fields { id: 2 name: "hdr.lrh.slid" bitwidth: 16 match_type: RANGE }
  match_fields { id: 3 name: "hdr.lrh.sl" bitwidth: 4 match_type: OPTIONAL }
  action_refs { id: 16777217 }
  action_refs { id: 16777219 annotations: "@tableonly" scope: TABLE_ONLY }
  action_refs { id: 21257015 annotations: "@defaultonly" scope: DEFAULT_ONLY }
  direct_resource_ids: 352321537
  size: 64
}
tables {
  preamble { id: 33554435 name: "FabricIngress.lpm_route" alias: "lpm_route" }
  match_fields { id: 1 name: "meta.dst" bitwidth: 32 match_type: LPM }
  action_refs { id: 16777217 }
  action_refs { id: 21257015 }
  size: 16
}
tables {
  preamble { id: 33554436 name: "FabricIngress.ecmp" alias: "ecmp" }
  match_fields { id: 1 name: "hdr.lrh.dlid" bitwidth: 16 match_type: EXACT }
  action_refs { id: 16777217 }
  action_refs { id: 21257015 annotations: "@defaultonly" scope: DEFAULT_ONLY }
  const_default_action_id: 21257015
  implementation_id: 285212673
  size: 64
}
tables {
  preamble { id: 33554437 name: "FabricIngress.kind_class" alias: "kind_class" }
  match_fields { id: 1 name: "hdr.lrh.kind" bitwidth: 8 match_type: EXACT }
  action_refs { id: 16777217 }
  action_refs { id: 21257015 }
  const_default_action_id: 21257015
  size: 4
  is_const_table: true
  has_initial_entries: true
}
actions { preamble { id: 16777217 name: "FabricIngress.forward" alias: "forward" }
  params { id: 1 name: "port" bitwidth: 9 } }
actions { preamble { id: 16777218 name: "FabricIngress.no_route" alias: "no_route" } }
actions { preamble { id: 16777219 name: "FabricIngress.drop" alias: "drop" } }
actions { preamble { id: 21257015 name: "NoAction" alias: "NoAction" annotations: "@noWarn(\\"unused\\")" } }
action_profiles {
  preamble { id: 285212673 name: "FabricIngress.ecmp_selector" alias: "ecmp_selector" }
  table_ids: 33554436 with_selector: true size: 16 max_group_size: 4
}
counters { preamble { id: 302120961 name: "FabricIngress.rx_port_counter" alias: "rx_port_counter" }
  spec { unit: BOTH } size: 8 }
counters { preamble { id: 302120962 name: "FabricIngress.drop_counter" alias: "drop_counter" }
  spec { unit: PACKETS } size: 16 }
direct_counters { preamble { id: 318767105 name: "FabricIngress.route_hits" alias: "route_hits" }
  spec { unit: BOTH } direct_table_id: 33554433 }
meters { preamble { id: 335544321 name: "FabricIngress.port_meter" alias: "port_meter" }
  spec { unit: BYTES } size: 4 }
direct_meters { preamble { id: 352321537 name: "FabricIngress.acl_meter" alias: "acl_meter" }
  spec { unit: PACKETS } direct_table_id: 33554434 }
controller_packet_metadata {
  preamble { id: 67146229 name: "packet_in" alias: "packet_in" annotations: "@controller_header(\\"packet_in\\")" }
  metadata { id: 1 name: "ingress_port" bitwidth: 9 }
  metadata { id: 2 name: "_pad" bitwidth: 7 }
  metadata { id: 3 name: "reason" bitwidth: 16 }
}
controller_packet_metadata {
  preamble { id: 67121543 name: "packet_out" alias: "packet_out" annotations: "@controller_header(\\"packet_out\\")" }
  metadata { id: 1 name: "egress_port" bitwidth: 9 }
  metadata { id: 2 name: "mcast" bitwidth: 1 }
  metadata { id: 3 name: "_pad" bitwidth: 6 }
  metadata { id: 4 name: "flags" bitwidth: 16 }
}
registers { preamble { id: 369098753 name: "FabricIngress.credit_reg" alias: "credit_reg" }
  type_spec { bitstring { bit { bitwidth: 32 } } } size: 8 }
digests { preamble { id: 385875969 name: "learn_t" alias: "learn_t" }
  type_spec { struct { name: "learn_t" } } }
type_info {
  structs { key: "learn_t" value {
    members { name: "slid" type_spec { bitstring { bit { bitwidth: 16 } } } }
    members { name: "port" type_spec { bitstring { bit { bitwidth: 9 } } } } } }
}
"""

BMV2_JSON = {
    "header_types": [],
    "headers": [],
    "actions": [
        {"name": "NoAction", "id": 0, "runtime_data": [], "primitives": []},
        {"name": "FabricIngress.forward", "id": 1,
         "runtime_data": [{"name": "port", "bitwidth": 9}], "primitives": []},
        {"name": "FabricIngress.no_route", "id": 2, "runtime_data": [], "primitives": []},
        {"name": "FabricIngress.drop", "id": 3, "runtime_data": [], "primitives": []},
    ],
    "pipelines": [{
        "name": "ingress", "init_table": "FabricIngress.dlid_route",
        "tables": [
            {"name": "FabricIngress.dlid_route", "id": 0, "match_type": "exact",
             "key": [{"match_type": "exact", "name": "hdr.lrh.dlid", "target": ["lrh", "dlid"]}],
             "actions": ["FabricIngress.forward", "FabricIngress.no_route", "NoAction"],
             "action_ids": [1, 2, 0], "with_counters": True, "support_timeout": False,
             "direct_meters": None, "max_size": 1024, "type": "simple",
             "default_entry": {"action_id": 2, "action_const": False, "action_data": [],
                               "action_entry_const": False}},
            {"name": "FabricIngress.acl", "id": 1, "match_type": "range",
             "key": [], "actions": [], "action_ids": [3, 1, 0], "max_size": 64, "type": "simple",
             "default_entry": {"action_id": 0, "action_const": False, "action_data": [],
                               "action_entry_const": False}},
            {"name": "FabricIngress.lpm_route", "id": 2, "match_type": "lpm", "key": [],
             "action_ids": [1, 0], "max_size": 16, "type": "simple",
             "default_entry": {"action_id": 1, "action_const": False, "action_data": ["0x5"],
                               "action_entry_const": False}},
            {"name": "FabricIngress.ecmp", "id": 3, "match_type": "exact", "key": [],
             "action_ids": [1, 0], "max_size": 64, "type": "indirect_ws",
             "action_profile": "FabricIngress.ecmp_selector",
             "default_entry": {"action_id": 0, "action_const": True, "action_data": [],
                               "action_entry_const": True}},
            {"name": "FabricIngress.kind_class", "id": 4, "match_type": "exact", "key": [],
             "action_ids": [1, 0], "max_size": 4, "type": "simple",
             "entries": [{"match_key": [{"match_type": "exact", "key": "0x03"}],
                          "action_entry": {"action_id": 1, "action_data": ["0x0a"]},
                          "priority": 1}],
             "default_entry": {"action_id": 0, "action_const": True, "action_data": [],
                               "action_entry_const": True}},
        ],
        "action_profiles": [{"name": "FabricIngress.ecmp_selector", "id": 0, "max_size": 16,
                             "selector": {"algo": "crc16", "input": []}}],
        "conditionals": [],
    }],
    "counter_arrays": [
        {"name": "FabricIngress.rx_port_counter", "id": 0, "is_direct": False, "size": 8},
        {"name": "FabricIngress.drop_counter", "id": 1, "is_direct": False, "size": 16},
        {"name": "FabricIngress.route_hits", "id": 2, "is_direct": True,
         "binding": "FabricIngress.dlid_route"},
    ],
    "meter_arrays": [
        {"name": "FabricIngress.port_meter", "id": 0, "is_direct": False, "size": 4,
         "rate_count": 2, "type": "bytes"},
    ],
    "register_arrays": [{"name": "FabricIngress.credit_reg", "id": 0, "size": 8, "bitwidth": 32}],
    "learn_lists": [{"id": 1, "name": "learn_t", "elements": []}],
}

IDS = {
    "dlid_route": 33554433, "acl": 33554434, "lpm_route": 33554435, "ecmp": 33554436,
    "kind_class": 33554437, "forward": 16777217, "no_route": 16777218, "drop": 16777219,
    "NoAction": 21257015, "ecmp_selector": 285212673, "rx_port_counter": 302120961,
    "drop_counter": 302120962, "route_hits": 318767105, "port_meter": 335544321,
    "acl_meter": 352321537, "credit_reg": 369098753, "learn_t": 385875969,
    "packet_in": 67146229, "packet_out": 67121543,
}


def p4info() -> p4info_pb2.P4Info:
    return text_format.Parse(P4INFO_TEXT, p4info_pb2.P4Info())


def device_config() -> bytes:
    return json.dumps(BMV2_JSON).encode()


class FakeDataplane:
    """An in-memory `runtime_api.Dataplane` that records what it is told."""

    def __init__(self):
        self.programs: list[dict] = []
        self.reset()
        self.packet_in_handler = self.digest_handler = self.port_status_handler = None
        self.packets_out: list[bytes] = []
        self.fail_next: str | None = None

    def reset(self):
        self.tables: dict[str, dict[int, tuple]] = {}
        self.defaults: dict[str, object] = {}
        self.members: dict[tuple[str, int], object] = {}
        self.groups: dict[tuple[str, int], list[int]] = {}
        self.counters: dict[tuple[str, int], tuple[int, int]] = {}
        self.direct_counters: dict[tuple[str, int], tuple[int, int]] = {}
        self.registers: dict[tuple[str, int], int] = {}
        self.meters: dict[tuple[str, int], list] = {}
        self.direct_meters: dict[tuple[str, int], list] = {}
        self.mc_groups: dict[int, list] = {}
        self.clone_sessions: dict[int, tuple] = {}
        self._next_handle = 1

    def _maybe_fail(self, op: str):
        if self.fail_next == op:
            self.fail_next = None
            raise DataplaneError(f"{op} failed on purpose")

    def load_program(self, bmv2_json):
        self._maybe_fail("load_program")
        self.programs.append(bmv2_json)
        self.reset()

    def table_add(self, table, key, target, priority=0):
        self._maybe_fail("table_add")
        h = self._next_handle
        self._next_handle += 1
        self.tables.setdefault(table, {})[h] = (tuple(key), target, priority)
        return h

    def table_modify(self, table, handle, target):
        key, _, prio = self.tables[table][handle]
        self.tables[table][handle] = (key, target, prio)

    def table_delete(self, table, handle):
        del self.tables[table][handle]
        self.direct_counters.pop((table, handle), None)

    def table_set_default(self, table, target):
        self.defaults[table] = target

    def table_clear(self, table):
        self.tables.pop(table, None)

    def act_prof_add_member(self, profile, member_id, call):
        self.members[(profile, member_id)] = call

    def act_prof_modify_member(self, profile, member_id, call):
        self.members[(profile, member_id)] = call

    def act_prof_delete_member(self, profile, member_id):
        del self.members[(profile, member_id)]

    def act_prof_set_group(self, profile, group_id, member_ids):
        self.groups[(profile, group_id)] = list(member_ids)

    def act_prof_delete_group(self, profile, group_id):
        del self.groups[(profile, group_id)]

    def counter_read(self, counter, index):
        return self.counters.get((counter, index), (0, 0))

    def counter_write(self, counter, index, nbytes, packets):
        self.counters[(counter, index)] = (nbytes, packets)

    def direct_counter_read(self, table, handle):
        return self.direct_counters.get((table, handle), (0, 0))

    def direct_counter_write(self, table, handle, nbytes, packets):
        self.direct_counters[(table, handle)] = (nbytes, packets)

    def register_read(self, register, index):
        return self.registers.get((register, index), 0)

    def register_write(self, register, index, value):
        self.registers[(register, index)] = value

    def meter_set(self, meter, index, rates):
        self.meters[(meter, index)] = rates

    def meter_get(self, meter, index):
        return self.meters.get((meter, index), [])

    def direct_meter_set(self, table, handle, rates):
        self.direct_meters[(table, handle)] = rates

    def mc_group_set(self, group_id, replicas):
        self.mc_groups[group_id] = list(replicas)

    def mc_group_delete(self, group_id):
        del self.mc_groups[group_id]

    def clone_session_set(self, session_id, replicas, class_of_service=0, packet_length_bytes=0):
        self.clone_sessions[session_id] = (list(replicas), class_of_service, packet_length_bytes)

    def clone_session_delete(self, session_id):
        del self.clone_sessions[session_id]

    def packet_out(self, frame):
        self.packets_out.append(frame)

    def set_packet_in_handler(self, handler):
        self.packet_in_handler = handler

    def set_digest_handler(self, handler):
        self.digest_handler = handler

    def set_port_status_handler(self, handler):
        self.port_status_handler = handler

    def port_set_params(self, port, rate_pps=None, rate_bps=None, delay_us=None, queue_depth=None):
        pass


class Stream:
    """One StreamChannel: send requests, receive responses with a timeout."""

    def __init__(self, stub):
        self._out: queue.Queue = queue.Queue()
        self.received: queue.Queue = queue.Queue()
        self.error: grpc.RpcError | None = None
        self.call = stub.StreamChannel(iter(self._out.get, None))
        self._thread = threading.Thread(target=self._recv, daemon=True)
        self._thread.start()

    def _recv(self):
        try:
            for msg in self.call:
                self.received.put(msg)
        except grpc.RpcError as e:
            self.error = e
        self.received.put(None)

    def send(self, msg: p4runtime_pb2.StreamMessageRequest):
        self._out.put(msg)

    def arbitrate(self, device_id=DEVICE_ID, election_id: int | None = 1, role: str = ""):
        req = p4runtime_pb2.StreamMessageRequest()
        req.arbitration.device_id = device_id
        if election_id is not None:
            req.arbitration.election_id.high = election_id >> 64
            req.arbitration.election_id.low = election_id & ((1 << 64) - 1)
        if role:
            req.arbitration.role.name = role
        self.send(req)

    def next(self, kind: str | None = None, timeout: float = 2.0):
        """The next response (of `kind`, skipping others); None if the stream ended."""
        while True:
            msg = self.received.get(timeout=timeout)
            if msg is None or kind is None or msg.WhichOneof("update") == kind:
                return msg

    def nothing(self, timeout: float = 0.2) -> bool:
        try:
            self.received.get(timeout=timeout)
        except queue.Empty:
            return True
        return False

    def close(self):
        self._out.put(None)
        self._thread.join(timeout=2)


class Client:
    def __init__(self, address: str, device_id: int = DEVICE_ID, election_id: int = 1):
        self.channel = grpc.insecure_channel(address)
        self.stub = p4runtime_pb2_grpc.P4RuntimeStub(self.channel)
        self.device_id = device_id
        self.election_id = election_id
        self.streams: list[Stream] = []

    def stream(self) -> Stream:
        s = Stream(self.stub)
        self.streams.append(s)
        return s

    def primary(self, election_id: int | None = None) -> Stream:
        """Open a stream and become primary with this client's election id."""
        s = self.stream()
        s.arbitrate(self.device_id, election_id or self.election_id)
        msg = s.next("arbitration")
        assert msg.arbitration.status.code == code_pb2.OK, msg
        return s

    def _set_eid(self, req, election_id=None):
        eid = self.election_id if election_id is None else election_id
        req.election_id.high, req.election_id.low = eid >> 64, eid & ((1 << 64) - 1)

    def set_pipeline(self, action=p4runtime_pb2.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT,
                     info=None, config=None, cookie=None, election_id=None, with_config=True):
        req = p4runtime_pb2.SetForwardingPipelineConfigRequest(device_id=self.device_id, action=action)
        self._set_eid(req, election_id)
        if with_config:
            req.config.p4info.CopyFrom(info or p4info())
            req.config.p4_device_config = device_config() if config is None else config
            if cookie is not None:
                req.config.cookie.cookie = cookie
        return self.stub.SetForwardingPipelineConfig(req)

    def write(self, *updates, atomicity=p4runtime_pb2.WriteRequest.CONTINUE_ON_ERROR,
              election_id=None, device_id=None):
        req = p4runtime_pb2.WriteRequest(
            device_id=self.device_id if device_id is None else device_id, atomicity=atomicity)
        self._set_eid(req, election_id)
        req.updates.extend(updates)
        return self.stub.Write(req)

    def read(self, *entities, device_id=None) -> list[p4runtime_pb2.Entity]:
        req = p4runtime_pb2.ReadRequest(device_id=self.device_id if device_id is None else device_id)
        req.entities.extend(entities)
        return [e for resp in self.stub.Read(req) for e in resp.entities]

    def close(self):
        for s in self.streams:
            s.close()
        self.channel.close()


def start_server(dp=None, cpu_port=CPU_PORT):
    dp = dp or FakeDataplane()
    server = serve(dp, "127.0.0.1:0", DEVICE_ID, cpu_port)
    return server, dp, f"127.0.0.1:{server.port}"


def write_errors(err: grpc.RpcError) -> list[p4runtime_pb2.Error]:
    """The per-update p4.v1.Error list of a failed Write (status UNKNOWN + details)."""
    assert err.code() == grpc.StatusCode.UNKNOWN, err
    for key, value in err.trailing_metadata():
        if key == "grpc-status-details-bin":
            status = status_pb2.Status.FromString(value)
            out = []
            for d in status.details:
                e = p4runtime_pb2.Error()
                assert d.Unpack(e)
                out.append(e)
            return out
    raise AssertionError("no grpc-status-details-bin in the Write error")


# ---- entity builders -------------------------------------------------------------------
def update(kind: str, **entity) -> p4runtime_pb2.Update:
    return p4runtime_pb2.Update(
        type=p4runtime_pb2.Update.Type.Value(kind), entity=p4runtime_pb2.Entity(**entity))


def route_entry(dlid: bytes = b"\x02", port: bytes | None = b"\x01", action="forward", **kw):
    te = p4runtime_pb2.TableEntry(table_id=IDS["dlid_route"], **kw)
    te.match.add(field_id=1).exact.value = dlid
    if action is not None:
        te.action.action.action_id = IDS[action]
        if port is not None:
            te.action.action.params.add(param_id=1, value=port)
    return te


def acl_entry(priority=10, mac=(b"\x0a", b"\xff"), slid=None, sl=None, action="drop"):
    te = p4runtime_pb2.TableEntry(table_id=IDS["acl"], priority=priority)
    if mac is not None:
        fm = te.match.add(field_id=1)
        fm.ternary.value, fm.ternary.mask = mac
    if slid is not None:
        fm = te.match.add(field_id=2)
        fm.range.low, fm.range.high = slid
    if sl is not None:
        te.match.add(field_id=3).optional.value = sl
    te.action.action.action_id = IDS[action]
    if action == "forward":
        te.action.action.params.add(param_id=1, value=b"\x03")
    return te
