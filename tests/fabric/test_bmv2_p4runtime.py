"""fabric.p4's SM contract on real bmv2 (simple_switch_grpc, no ports): what its P4Runtime
server accepts is what the SM and the agent write, and it refuses register writes with
the very status the embedded switch gives.

Compiled by the embedded compiler, whose JSON bmv2 loads as is."""

from __future__ import annotations

import json
import subprocess

import pytest

pytestmark = pytest.mark.bmv2
p4runtime_pb2 = pytest.importorskip("p4.v1.p4runtime_pb2")

DEVICE_ID = 7


@pytest.fixture(scope="module")
def bmv2(compiled, tmp_path_factory):
    """(SM connection, address, P4Info path) of a simple_switch_grpc holding fabric.p4."""
    from google.protobuf import text_format

    from controller.p4runtime_client import SwitchConnection
    from controller.sm import SM_ELECTION_ID
    from topologies.ports import free_tcp_port

    program, info = compiled
    program = json.loads(json.dumps(program))
    out = tmp_path_factory.mktemp("bmv2")
    json_path, info_path = out / "fabric.json", out / "fabric.p4info.txtpb"
    json_path.write_text(json.dumps(program))
    info_path.write_text(text_format.MessageToString(info))
    address = f"127.0.0.1:{free_tcp_port()}"
    proc = subprocess.Popen(["simple_switch_grpc", "--device-id", str(DEVICE_ID), "--no-p4",
                             "--", "--grpc-server-addr", address, "--cpu-port", "510"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    conn = None
    try:
        conn = SwitchConnection("bmv2", address, DEVICE_ID, SM_ELECTION_ID)
        conn.set_pipeline(info_path, json_path)
        yield conn, address, info_path
    finally:
        if conn is not None:
            conn.close()
        proc.terminate()  # the process this fixture started, by its handle
        proc.wait(timeout=10)


def test_bmv2_refuses_register_writes_with_the_embedded_switch_s_status(bmv2):
    from controller.p4info import encode
    from controller.p4runtime_client import SwitchRpcError, SwitchWriteError

    conn, _address, _info = bmv2
    entry = p4runtime_pb2.RegisterEntry(register_id=conn.p4info.id("registers", "fc_buffer"))
    entry.index.index = 3
    entry.data.bitstring = encode(1, 32)
    update = p4runtime_pb2.Update(type=p4runtime_pb2.Update.MODIFY,
                                  entity=p4runtime_pb2.Entity(register_entry=entry))
    with pytest.raises(SwitchWriteError,
                       match="UNIMPLEMENTED: Register writes are not supported yet"):
        conn.write([update])
    with pytest.raises(SwitchRpcError, match="UNIMPLEMENTED"):
        conn.read_register("fc_buffer", 3)


def test_flow_control_and_queue_limits_are_accepted_as_tables_and_clone_sessions(bmv2):
    from controller import flow_control as fc
    from controller import program_constants
    from controller.cli import _flow_control

    conn, _address, _info = bmv2
    params = fc.FlowControlParams(mode=fc.Mode.CREDIT, credit_limit=16, credit_coalesce=2)
    fc.configure(conn, params, {1: 51200, 2: 51200}, queue_limit={1: 64, 2: 64},
                 constants=program_constants.fabric_p4())
    assert _flow_control(conn)["mode"] == "CREDIT"
    limits = conn.read_table_entries("FabricIngress.egress_config")
    assert len(limits) == 2


def test_the_agent_marks_ports_down_while_the_sm_holds_the_switch(bmv2):
    from controller.agent import connect_agent
    from controller.liveness import Liveness, read_down_ports

    conn, address, info = bmv2
    agent = connect_agent("bmv2", address, DEVICE_ID, info)  # roles ignored: the SM's id
    try:
        liveness = Liveness(agent)
        liveness.set(2, up=False)
        liveness.set(509, up=False)
        assert read_down_ports(conn) == {2, 509}
        liveness.set(2, up=True)
        assert read_down_ports(conn) == {509}
        conn.write([conn.insert(conn.p4info.table_entry(  # the SM still writes
            "FabricIngress.dlid_route", {"hdr.lrh.dlid": 9}, "FabricIngress.forward_frr",
            {"primary": 2, "backup": 3}))])
    finally:
        agent.close()


def test_partitions_and_class_queues_are_accepted_and_arbitration_stays_strict(bmv2):
    """bmv2 takes the P_Key tables and tx_queues; it has no VL arbitration, refuses the
    embedded switch's extern entry, and the SM reports strict priority for it."""
    from controller.partitions import parse_partitions
    from controller.qos import SCHEDULER_STRICT, install_partitions, install_qos
    from controller.qos_policy import parse_qos_policy

    conn, _address, _info = bmv2
    parts = parse_partitions("jobA=0x0001 : hA=full, hB ;", ["hA", "hB"])
    assert install_partitions(conn, {1: "hA", 2: "hB"}, parts) == 4
    policy = parse_qos_policy("qos_max_vls 2\nqos_vlarb_low 0:224,1:32\n")
    result = install_qos(conn, [1, 2], policy, class_queues=True)
    assert result.scheduler == SCHEDULER_STRICT and "strict priority" in result.reason


def test_bmv2_reads_the_step_counters_and_the_readout_derives_the_registers(bmv2):
    """Registers are unreadable on bmv2; the counters beside them are read instead."""
    from controller.readout import REGISTER_COUNTERS, read_telemetry
    from topologies.generators import build

    conn, _address, _info = bmv2
    for name in REGISTER_COUNTERS:  # each answers on real bmv2: nothing counted yet
        assert conn.read_counters(name, indices=[8]).get(8, (0, 0)) == (0, 0)
    port = read_telemetry({"s1": conn}, build("line:2"), 8)["s1"]["2"]
    assert port["fc_buffer"] == [0] * 8 and port["buffer_peak"] == [0] * 8
    assert port["fc_queue_head"] == port["fc_queue_tail"] == [0] * 8
    assert port["blocked_ns"] == [0] * 8  # in quanta, from blocked_quanta
    assert port["registers_unread"].startswith("derived from counters")
    assert "UNIMPLEMENTED" in port["registers_unread"]
