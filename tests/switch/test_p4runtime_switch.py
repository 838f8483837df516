"""End to end: the real embedded Switch (no interfaces) behind the P4Runtime server,
driven by p4runtime-shell, with packets run through `Switch.process`.

The program is a hand-written bmv2 JSON in p4c's format (a cut-down fabric.p4:
packet-out by header, DLID routing, punt of non-fabric frames with a packet_in
header) until the embedded compiler can build p4src/fabric.p4 here.
"""

from __future__ import annotations

import json
import queue

import pytest
from test_p4runtime_support import DEVICE_ID

sh = pytest.importorskip("p4runtime_sh.shell")
switch_mod = pytest.importorskip("p4switch.switch")

from p4switch.p4runtime_server import serve  # noqa: E402

CPU_PORT = 64


def _fields(*pairs):
    return [[n, w, False] for n, w in pairs]


STD_META = _fields(
    ("ingress_port", 9), ("egress_spec", 9), ("egress_port", 9), ("instance_type", 32),
    ("packet_length", 32), ("enq_timestamp", 32), ("enq_qdepth", 19), ("deq_timedelta", 32),
    ("deq_qdepth", 19), ("ingress_global_timestamp", 48), ("egress_global_timestamp", 48),
    ("mcast_grp", 16), ("egress_rid", 16), ("checksum_error", 1), ("parser_error", 32),
    ("priority", 3), ("_padding", 3))


def _field(h, f):
    return {"type": "field", "value": [h, f]}


def _assign(dst, src):
    return {"op": "assign", "parameters": [dst, src]}


def _state(name, sid, extract, key, transitions):
    ops = [{"op": "extract", "parameters": [{"type": "regular", "value": extract}]}] if extract else []
    return {"name": name, "id": sid, "parser_ops": ops, "transition_key": key,
            "transitions": [{"type": t, "value": v, "mask": None, "next_state": n}
                            for t, v, n in transitions]}


def _table(name, tid, key, actions, default, const_default):
    return {"name": name, "id": tid, "key": key, "match_type": "exact", "type": "simple",
            "max_size": 1024, "with_counters": False, "support_timeout": False,
            "direct_meters": None, "action_ids": [a[0] for a in actions],
            "actions": [a[1] for a in actions], "base_default_next": None,
            "next_tables": {a[1]: None for a in actions},
            "default_entry": {"action_id": default, "action_const": const_default,
                              "action_data": [], "action_entry_const": const_default}}


def _valid(h):
    return {"type": "expression", "value": {"op": "d2b", "left": None,
                                            "right": _field(h, "$valid$")}}


MINI_JSON = {
    "header_types": [
        {"name": "scalars_0", "id": 0, "fields": []},
        {"name": "standard_metadata", "id": 1, "fields": STD_META},
        {"name": "packet_out_t", "id": 2, "fields": _fields(("egress_port", 16), ("flags", 16))},
        {"name": "packet_in_t", "id": 3, "fields": _fields(("ingress_port", 16), ("reason", 16))},
        {"name": "ethernet_t", "id": 4, "fields": _fields(("dst", 48), ("src", 48), ("etype", 16))},
        {"name": "lrh_t", "id": 5, "fields": _fields(("dlid", 16), ("slid", 16))},
    ],
    "headers": [
        {"name": "scalars", "id": 0, "header_type": "scalars_0", "metadata": True, "pi_omit": True},
        {"name": "standard_metadata", "id": 1, "header_type": "standard_metadata",
         "metadata": True, "pi_omit": True},
        {"name": "packet_out", "id": 2, "header_type": "packet_out_t", "metadata": False, "pi_omit": True},
        {"name": "packet_in", "id": 3, "header_type": "packet_in_t", "metadata": False, "pi_omit": True},
        {"name": "ethernet", "id": 4, "header_type": "ethernet_t", "metadata": False, "pi_omit": True},
        {"name": "lrh", "id": 5, "header_type": "lrh_t", "metadata": False, "pi_omit": True},
    ],
    "header_stacks": [], "header_union_types": [], "header_unions": [], "header_union_stacks": [],
    "field_lists": [],
    "errors": [["NoError", 0], ["PacketTooShort", 1], ["NoMatch", 2], ["StackOutOfBounds", 3],
               ["HeaderTooShort", 4], ["ParserTimeout", 5], ["ParserInvalidArgument", 6]],
    "enums": [],
    "parsers": [{"name": "parser", "id": 0, "init_state": "start", "parse_states": [
        _state("start", 0, None, [_field("standard_metadata", "ingress_port")],
               [("hexstr", "0x0040", "parse_packet_out"), ("default", None, "parse_ethernet")]),
        _state("parse_packet_out", 1, "packet_out", [], [("default", None, "parse_ethernet")]),
        _state("parse_ethernet", 2, "ethernet", [_field("ethernet", "etype")],
               [("hexstr", "0x88b5", "parse_lrh"), ("default", None, None)]),
        _state("parse_lrh", 3, "lrh", [], [("default", None, None)]),
    ]}],
    "parse_vsets": [],
    "deparsers": [{"name": "deparser", "id": 0, "order": ["packet_in", "ethernet", "lrh"],
                   "primitives": []}],
    "meter_arrays": [], "counter_arrays": [], "register_arrays": [], "calculations": [],
    "learn_lists": [],
    "actions": [
        {"name": "NoAction", "id": 0, "runtime_data": [], "primitives": []},
        {"name": "FabricIngress.forward", "id": 1, "runtime_data": [{"name": "port", "bitwidth": 9}],
         "primitives": [_assign(_field("standard_metadata", "egress_spec"),
                                {"type": "runtime_data", "value": 0})]},
        {"name": "FabricIngress.no_route", "id": 2, "runtime_data": [], "primitives": [
            {"op": "mark_to_drop", "parameters": [{"type": "header", "value": "standard_metadata"}]}]},
        {"name": "FabricIngress.punt_to_cpu", "id": 3, "runtime_data": [], "primitives": [
            _assign(_field("standard_metadata", "egress_spec"), {"type": "hexstr", "value": "0x0040"}),
            {"op": "add_header", "parameters": [{"type": "header", "value": "packet_in"}]},
            _assign(_field("packet_in", "ingress_port"), _field("standard_metadata", "ingress_port")),
            _assign(_field("packet_in", "reason"), {"type": "hexstr", "value": "0x0007"})]},
        {"name": "FabricIngress.from_cpu", "id": 4, "runtime_data": [], "primitives": [
            _assign(_field("standard_metadata", "egress_spec"), _field("packet_out", "egress_port")),
            {"op": "remove_header", "parameters": [{"type": "header", "value": "packet_out"}]}]},
    ],
    "pipelines": [
        {"name": "ingress", "id": 0, "init_table": "node_2", "action_profiles": [],
         "tables": [
             _table("FabricIngress.dlid_route", 0,
                    [{"match_type": "exact", "name": "hdr.lrh.dlid", "target": ["lrh", "dlid"],
                      "mask": None}],
                    [(1, "FabricIngress.forward"), (2, "FabricIngress.no_route")], 2, False),
             _table("tbl_from_cpu", 1, [], [(4, "FabricIngress.from_cpu")], 4, True),
             _table("tbl_punt_to_cpu", 2, [], [(3, "FabricIngress.punt_to_cpu")], 3, True),
         ],
         "conditionals": [
             {"name": "node_2", "id": 0, "expression": _valid("packet_out"),
              "true_next": "tbl_from_cpu", "false_next": "node_4"},
             {"name": "node_4", "id": 1, "expression": _valid("lrh"),
              "true_next": "FabricIngress.dlid_route", "false_next": "tbl_punt_to_cpu"},
         ]},
        {"name": "egress", "id": 1, "init_table": None, "tables": [], "action_profiles": [],
         "conditionals": []},
    ],
    "checksums": [], "force_arith": [], "extern_instances": [], "field_aliases": [],
    "program": "mini_fabric.p4", "__meta__": {"version": [2, 23], "compiler": "hand-written"},
}

MINI_P4INFO = """
pkg_info { arch: "v1model" }
tables {
  preamble { id: 37375156 name: "FabricIngress.dlid_route" alias: "dlid_route" }
  match_fields { id: 1 name: "hdr.lrh.dlid" bitwidth: 16 match_type: EXACT }
  action_refs { id: 29683729 }
  action_refs { id: 26128362 }
  size: 1024
}
actions { preamble { id: 29683729 name: "FabricIngress.forward" alias: "forward" }
  params { id: 1 name: "port" bitwidth: 9 } }
actions { preamble { id: 26128362 name: "FabricIngress.no_route" alias: "no_route" } }
controller_packet_metadata {
  preamble { id: 81826293 name: "packet_in" alias: "packet_in" annotations: "@controller_header(\\"packet_in\\")" }
  metadata { id: 1 name: "ingress_port" bitwidth: 16 }
  metadata { id: 2 name: "reason" bitwidth: 16 }
}
controller_packet_metadata {
  preamble { id: 76689799 name: "packet_out" alias: "packet_out" annotations: "@controller_header(\\"packet_out\\")" }
  metadata { id: 1 name: "egress_port" bitwidth: 16 }
  metadata { id: 2 name: "flags" bitwidth: 16 }
}
"""

ETH = bytes.fromhex("020000000002" "020000000001")


def fabric_frame(dlid: int) -> bytes:
    return ETH + b"\x88\xb5" + dlid.to_bytes(2, "big") + b"\x00\x01" + b"data"


@pytest.fixture
def real_switch(tmp_path):
    sw = switch_mod.Switch(ports={}, cpu_port=CPU_PORT, device_id=DEVICE_ID)
    server = serve(sw, "127.0.0.1:0", DEVICE_ID, CPU_PORT)
    p4info_path, json_path = tmp_path / "p4info.txt", tmp_path / "mini.json"
    p4info_path.write_text(MINI_P4INFO)
    json_path.write_text(json.dumps(MINI_JSON))
    sh.setup(device_id=DEVICE_ID, grpc_addr=f"127.0.0.1:{server.port}", election_id=(0, 1),
             config=sh.FwdPipeConfig(str(p4info_path), str(json_path)), verbose=False)
    yield sw
    sh.teardown()
    server.stop(None)


def test_shell_programs_the_real_switch_and_packets_follow_the_entry(real_switch):
    sw = real_switch
    assert sw.process(1, fabric_frame(2)) == []  # default no_route drops
    te = sh.TableEntry("FabricIngress.dlid_route")(action="FabricIngress.forward")
    te.match["hdr.lrh.dlid"] = "2"
    te.action["port"] = "1"
    te.insert()
    [got] = list(sh.TableEntry("FabricIngress.dlid_route").read())
    assert got.match["hdr.lrh.dlid"].exact.value == b"\x02"
    assert sw.process(3, fabric_frame(2)) == [(1, fabric_frame(2))]


def test_packet_out_and_packet_in_through_the_real_switch(real_switch):
    sw = real_switch
    outputs: queue.Queue = queue.Queue()
    pkt = sh.PacketOut(payload=fabric_frame(9), egress_port="5", flags="0")
    real_process = sw.process

    def capture(port, frame):
        out = real_process(port, frame)
        outputs.put(out)
        return out

    sw.process = capture  # packet_out runs process() synchronously when the switch is not started
    pkt.send()
    assert outputs.get(timeout=2) == [(5, fabric_frame(9))]
    plain = ETH + b"\x08\x00" + b"not fabric"
    sw.process = real_process
    sw.process(4, plain)
    [pin] = list(sh.PacketIn().sniff(timeout=0.3))
    assert pin.packet.payload == plain
    md = {m.metadata_id: m.value for m in pin.packet.metadata}
    assert md == {1: b"\x04", 2: b"\x07"}


def test_a_read_lists_entries_in_slot_order_as_simple_switch_grpc_does(real_switch):
    """A new entry takes the lowest free slot of its table, and a read walks the slots
    (checked against real simple_switch_grpc: the same writes read back 4, 2, 5, 6)."""
    def entry(dlid):
        te = sh.TableEntry("FabricIngress.dlid_route")(action="FabricIngress.forward")
        te.match["hdr.lrh.dlid"] = str(dlid)
        te.action["port"] = "1"
        return te

    for d in (1, 2, 3):
        entry(d).insert()
    entry(1).delete()
    entry(4).insert()   # slot 0
    entry(3).delete()
    entry(5).insert()   # slot 2
    entry(6).insert()   # slot 3
    got = [int.from_bytes(e.match["hdr.lrh.dlid"].exact.value, "big")
           for e in sh.TableEntry("FabricIngress.dlid_route").read()]
    assert got == [4, 2, 5, 6]
