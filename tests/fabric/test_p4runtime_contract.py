"""The SM-facing contract of fabric.p4 over P4Runtime: the compiled pipeline is
pushed to the embedded switch's server by the SM's own client, configured the
way docs/fabric.md says (default action of fc_config, port_config, FRR routes,
clone sessions 100 + port, port_liveness's mask, egress_config), and frames
follow. Nothing is written to a register: the embedded switch refuses register
writes as bmv2's P4Runtime server does."""

from __future__ import annotations

import pytest
from fabric_harness import CPU_PORT, FC_PFC, FC_SESSION_BASE, data_frame, psn_of
from scapy.layers.l2 import Ether

from traffic.frames import pfc_frame

p4runtime_pb2 = pytest.importorskip("p4.v1.p4runtime_pb2")

DEVICE_ID = 1


@pytest.fixture
def sm_and_switch(compiled, tmp_path):
    import json

    from google.protobuf import text_format

    from controller.p4runtime_client import SwitchConnection
    from p4switch.p4runtime_server import serve
    from p4switch.switch import Switch

    bmv2, info = compiled
    json_path, info_path = tmp_path / "fabric.json", tmp_path / "fabric.p4info.txtpb"
    json_path.write_text(json.dumps(bmv2))
    info_path.write_text(text_format.MessageToString(info))
    sw = Switch(ports={}, cpu_port=CPU_PORT, device_id=DEVICE_ID)
    server = serve(sw, "127.0.0.1:0", DEVICE_ID, CPU_PORT)
    conn = SwitchConnection("s1", f"127.0.0.1:{server.port}", DEVICE_ID)
    try:
        conn.set_pipeline(info_path, json_path)
        yield conn, sw
    finally:
        conn.close()
        server.stop(None)


def clone_session_insert(session: int, port: int):
    entry = p4runtime_pb2.PacketReplicationEngineEntry()
    entry.clone_session_entry.session_id = session
    entry.clone_session_entry.replicas.add(egress_port=port, instance=1)
    return p4runtime_pb2.Update(type=p4runtime_pb2.Update.INSERT,
                                entity=p4runtime_pb2.Entity(packet_replication_engine_entry=entry))


def test_sm_configures_pfc_frr_and_clone_sessions_over_p4runtime(sm_and_switch):
    conn, sw = sm_and_switch
    info = conn.p4info
    mode = info.table_entry("FabricIngress.fc_config", {}, "FabricIngress.set_fc_mode", {
        "mode": FC_PFC, "xoff": 2, "xon": 0, "headroom": 4, "credit_limit": 0,
        "credit_coalesce": 1, "hoq_lifetime_us": 0, "watchdog_detect_us": 0,
        "watchdog_restore_us": 0})
    mode.is_default_action = True
    conn.write([
        conn.modify(mode),
        conn.insert(info.table_entry("FabricIngress.port_config",
                                     {"standard_metadata.ingress_port": 1},
                                     "FabricIngress.set_port", {"pause_quantum_ns": 51200})),
        conn.insert(info.table_entry("FabricIngress.dlid_route", {"hdr.lrh.dlid": 5},
                                     "FabricIngress.forward_frr", {"primary": 2, "backup": 3})),
        *(clone_session_insert(FC_SESSION_BASE + p, p) for p in (1, 2, 3)),
    ])
    assert [psn_of(f) for p, f in sw.process(1, bytes(data_frame(5, psn=1))) if p == 2] == [1]

    from controller.liveness import Liveness

    Liveness(conn).set(2, up=False)  # the local agent's write
    assert [p for p, _ in sw.process(1, bytes(data_frame(5, psn=2)))] == [3]

    # Stall port 3: frames from port 1 pile up; at XOFF port 1 gets a pause.
    sw.process(3, bytes(pfc_frame(1, [0xFFFF] + [0] * 7)))
    outputs = [out for psn in (3, 4) for out in sw.process(1, bytes(data_frame(5, psn=psn)))]
    pauses = [(p, Ether(f)) for p, f in outputs if f[12:14] == b"\x88\x08"]
    assert [p for p, _ in pauses] == [1]
    assert conn.read_counter("pause_tx", 1 * 8 + 0)[0] == 1  # (packets, bytes)


def test_register_writes_are_refused_as_bmv2_refuses_them(sm_and_switch):
    from controller.p4info import encode
    from controller.p4runtime_client import SwitchWriteError

    conn, _sw = sm_and_switch
    entry = p4runtime_pb2.RegisterEntry(register_id=conn.p4info.id("registers", "fc_buffer"))
    entry.index.index = 3
    entry.data.bitstring = encode(1, 32)
    update = p4runtime_pb2.Update(type=p4runtime_pb2.Update.MODIFY,
                                  entity=p4runtime_pb2.Entity(register_entry=entry))
    with pytest.raises(SwitchWriteError,
                       match="UNIMPLEMENTED: Register writes are not supported yet"):
        conn.write([update])


def test_lossy_egress_limit_is_a_table_entry_and_tail_drops_beyond_it(sm_and_switch):
    from controller import flow_control as fc
    from controller import program_constants

    conn, sw = sm_and_switch
    conn.write([conn.insert(conn.p4info.table_entry(
        "FabricIngress.dlid_route", {"hdr.lrh.dlid": 5}, "FabricIngress.forward", {"port": 2}))])
    fc.configure(conn, fc.FlowControlParams(), {}, queue_limit={2: 2},
                 constants=program_constants.fabric_p4())
    assert len(sw.process(1, bytes(data_frame(5, psn=1)))) == 1  # under the limit: sent
    sw.register_write("egress_queued", 2, 2)  # two frames waiting for port 2 (data-plane state)
    assert sw.process(1, bytes(data_frame(5, psn=2))) == []
    assert conn.read_counter("FabricIngress.drop_counter", 2 * 8 + 2)[0] == 1  # DROP_TAIL at 2


def test_vl_arbitration_is_written_as_an_extern_entry_per_port(sm_and_switch):
    from controller.p4runtime_client import SwitchWriteError
    from traffic.vl_arbitration import VlArbitration

    conn, sw = sm_and_switch
    sw.tm.nprio = 8  # as started with --priority-queues 8
    table = VlArbitration(high=((2, 4),), low=((0, 224), (1, 32)), high_limit=6)
    conn.write([conn.vl_arbitration_update(3, table)])
    assert sw.tm.port(3).arbiter.config == table
    with pytest.raises(SwitchWriteError, match="ALREADY_EXISTS"):
        conn.write([conn.vl_arbitration_update(3, table)])
    equal = VlArbitration.equal(range(2))
    conn.write([conn.vl_arbitration_update(3, equal, p4runtime_pb2.Update.MODIFY)])
    assert sw.tm.port(3).arbiter.config == equal
    conn.write([conn.vl_arbitration_update(3, equal, p4runtime_pb2.Update.DELETE)])
    assert sw.tm.port(3).arbiter is None  # strict priority again


def test_vl_arbitration_beyond_the_switch_queues_is_refused(sm_and_switch):
    from controller.p4runtime_client import SwitchWriteError
    from traffic.vl_arbitration import VlArbitration

    conn, sw = sm_and_switch  # one queue per port: only VL 0 exists
    with pytest.raises(SwitchWriteError, match="priority queues"):
        conn.write([conn.vl_arbitration_update(1, VlArbitration(low=((0, 1), (1, 1))))])
    assert sw.tm.port(1).arbiter is None


def test_sm_qos_step_installs_sl_to_vl_class_queues_and_arbitration(sm_and_switch):
    from controller.qos import SCHEDULER_ARBITRATION, SCHEDULER_STRICT, install_qos
    from controller.qos_policy import parse_qos_policy

    conn, sw = sm_and_switch
    policy = parse_qos_policy("qos_max_vls 2\nqos_vlarb_low 0:224,1:32\n"
                              "qos_class gradient 0\nqos_class checkpoint 1\n")
    assert install_qos(conn, [1, 2], policy, class_queues=False).scheduler == SCHEDULER_STRICT
    assert sw.tm.port(1).arbiter is None
    sw.tm.nprio = 8  # as started with --priority-queues 8
    result = install_qos(conn, [1, 2], policy, class_queues=True)  # again: idempotent
    assert result.scheduler == SCHEDULER_ARBITRATION and result.ports == (1, 2)
    assert sw.tm.port(2).arbiter.config == policy.swe.arbitration
    entries = conn.read_table_entries("FabricIngress.sl_to_vl")
    assert len(entries) == 1  # SL 1 -> VL 1; every other SL takes the default VL 0
    read = p4runtime_pb2.Entity(table_entry=p4runtime_pb2.TableEntry(
        table_id=conn.p4info.table("FabricIngress.tx_queues").id, is_default_action=True))
    (default,) = conn.read([read])
    assert default.table_entry.action.action.params[0].value == b"\x01"


def test_sm_partition_step_enforces_pkeys_at_host_ports(sm_and_switch):
    from fabric_harness import data_frame as frame

    from controller.partitions import parse_partitions
    from controller.qos import install_partitions
    from controller.sm import read_drop_counters

    conn, sw = sm_and_switch
    info = conn.p4info
    for dlid, port in ((1, 1), (2, 2), (3, 3)):
        conn.write([conn.insert(info.table_entry("FabricIngress.dlid_route",
                                                 {"hdr.lrh.dlid": dlid},
                                                 "FabricIngress.forward", {"port": port}))])
    parts = parse_partitions("jobA=0x0001 : hA=full, hB ;\njobB=0x0002 : hC=full ;",
                             ["hA", "hB", "hC"])
    assert install_partitions(conn, {1: "hA", 2: "hB", 3: "hC"}, parts) == 6
    assert [p for p, _f in sw.process(1, bytes(frame(2, pkey=parts.pkey_for("hA", "hB"))))] \
        == [2]
    assert sw.process(1, bytes(frame(3, pkey=0x8001))) == []  # hC is not in jobA
    assert sw.process(3, bytes(frame(1, pkey=0x8002))) == []  # hA is not in jobB
    drops = {cell: packets for cell, (packets, _bytes) in
             read_drop_counters(conn, [1, 2, 3]).items()}
    assert drops == {(1, "pkey"): 1, (3, "pkey"): 1}  # named by the SM's drop reasons
