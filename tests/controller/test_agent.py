"""Failure handling: the local agent flips liveness at once, the SM reroutes globally.

The veth test needs root: it creates `smt-a0`/`smt-b0` and deletes them by name.
"""

from __future__ import annotations

import os
import queue
import struct
import subprocess
import sys
import time

import pytest

from controller.agent import (
    IFF_LOWER_UP,
    IFF_UP,
    RTM_DELLINK,
    RTM_NEWLINK,
    LocalAgent,
    PortEvent,
    parse_link_messages,
)
from controller.lids import LidMap
from controller.liveness import read_down_ports
from controller.p4runtime_client import SwitchConnection
from controller.routing import engine
from controller.sm import SubnetManager
from tests.veths import ip, veth_pairs
from topologies.generators import build

pytestmark = pytest.mark.timing  # asserts on elapsed time (conftest: the serial part)


def _link_message(kind: int, name: str, flags: int) -> bytes:
    attr_name = name.encode() + b"\0"
    attr = struct.pack("=HH", 4 + len(attr_name), 3) + attr_name
    attr += b"\0" * (-len(attr) % 4)
    body = struct.pack("=BxHiII", 0, 1, 7, flags, 0xFFFFFFFF) + attr
    return struct.pack("=IHHII", 16 + len(body), kind, 0, 0, 0) + body


def test_netlink_link_messages_give_name_and_carrier():
    data = (_link_message(RTM_NEWLINK, "smt-a0", IFF_UP | IFF_LOWER_UP)
            + _link_message(RTM_NEWLINK, "eth1", IFF_UP)  # admin up, no carrier
            + _link_message(RTM_DELLINK, "eth2", IFF_UP | IFF_LOWER_UP))
    assert parse_link_messages(data) == [("smt-a0", True), ("eth1", False), ("eth2", False)]


@pytest.fixture
def frr_sm(fake_fabric_switches, frr_p4info_path, bmv2_json, tmp_path):
    fabric = build("leafspine:2,2,2")  # s1, s2 leaves (uplinks 3, 4); s3, s4 spines
    servers, conns = {}, {}
    for sw in fabric.switches:
        servers[sw.name], address = fake_fabric_switches(sw.name)
        conns[sw.name] = SwitchConnection(sw.name, address, device_id=sw.device_id)
    sm = SubnetManager(fabric, conns, engine=engine("ftree"), lid_map=LidMap())
    sm.bring_up(frr_p4info_path, bmv2_json)
    sm.timeline_path = tmp_path / "timeline.jsonl"
    yield sm, servers
    sm.close()


def _event(switch: str, port: int, up: bool) -> PortEvent:
    now = time.time_ns()
    return PortEvent(switch, port, up, detected_ns=now, switchover_ns=now + 1000)


def test_a_failed_uplink_moves_every_route_off_it_and_writes_only_those(frr_sm):
    sm, _servers = frr_sm
    before = {name: dict(t) for name, t in sm.routes.items()}
    record = sm.handle_port_event(_event("s1", 3, up=False))
    assert record["link"] == "s1:3-s3:1" and "error" not in record
    assert 3 not in sm.read_routes("s1").values()
    moved = sum(1 for name in before for dlid, port in before[name].items()
                if sm.routes[name].get(dlid) != port)
    assert 0 < record["entries_written"] <= moved + sum(len(t) for t in before.values())
    for key in ("detected_ns", "switchover_ns", "sm_received_ns", "recompute_done_ns",
                "install_done_ns"):
        assert record[key] > 0
    assert record["detected_ns"] <= record["sm_received_ns"] <= record["recompute_done_ns"] \
        <= record["install_done_ns"]
    # the spine end reports the same cable: nothing to do
    assert sm.handle_port_event(_event("s3", 1, up=False))["note"] == "already known"
    # the cable returns: the original routes come back
    sm.handle_port_event(_event("s1", 3, up=True))
    assert {name: dict(t) for name, t in sm.routes.items()} == before
    lines = sm.timeline_path.read_text().splitlines()
    assert [line.count('"event"') for line in lines] == [1, 1, 1]


def test_a_switch_rejecting_the_reroute_is_logged_and_the_rest_installed(frr_sm):
    sm, servers = frr_sm
    servers["s2"].reject_dlids = {bytes([sm.lids["h1"]])}
    record = sm.handle_port_event(_event("s1", 3, up=False))
    assert "s2" in record["error"] and "rejected" in record["error"]
    assert 3 not in sm.read_routes("s1").values()  # s1 got its new routes anyway


def test_events_reported_by_agents_are_handled_in_order(frr_sm):
    sm, _servers = frr_sm
    sm.start_event_loop()
    sm.report(_event("s1", 4, up=False))
    sm.report(_event("s1", 4, up=True))
    deadline = time.monotonic() + 5
    while len(sm.timeline) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert [r["event"] for r in sm.timeline] == ["port_down", "port_up"]


@pytest.fixture
def smt_veth():
    with veth_pairs(("smt-a0", "smt-b0")):
        yield "smt-a0", "smt-b0"


def test_agent_marks_the_port_down_within_milliseconds_of_carrier_loss(
        smt_veth, fake_switch, frr_p4info_path, bmv2_json):
    watched, peer = smt_veth
    server, address = fake_switch
    conn = SwitchConnection("s1", address, device_id=1)
    conn.set_pipeline(frr_p4info_path, bmv2_json)
    reports: queue.Queue[PortEvent] = queue.Queue()
    deadline = time.monotonic() + 2
    while not os.path.exists(f"/sys/class/net/{watched}") or \
            open(f"/sys/class/net/{watched}/carrier").read().strip() != "1":
        assert time.monotonic() < deadline, "veth carrier never came up"
        time.sleep(0.01)
    agent = LocalAgent("s1", conn, {watched: 3}, reports.put).start()
    try:
        cut_ns = time.time_ns()
        ip("link", "set", peer, "down")
        down = reports.get(timeout=2)
        assert (down.switch, down.port, down.up, down.error) == ("s1", 3, False, "")
        assert read_down_ports(conn) == {3}
        detection_ms = (down.detected_ns - cut_ns) / 1e6
        switchover_ms = (down.switchover_ns - cut_ns) / 1e6
        assert detection_ms < 50 and switchover_ms < 100, (detection_ms, switchover_ms)
        ip("link", "set", peer, "up")
        up = reports.get(timeout=2)
        assert up.up and read_down_ports(conn) == set()
    finally:
        agent.stop()
        conn.close()


# ---- the agent as a process, reporting over the SM's report socket


def test_reports_cross_the_socket_as_port_events_and_ready_is_remembered(tmp_path):
    from controller.port_reports import ReportClient, ReportEndpoint

    got: queue.Queue[PortEvent] = queue.Queue()
    endpoint = ReportEndpoint(str(tmp_path / "r.sock"), got.put).start()
    try:
        assert oct(os.stat(endpoint.address).st_mode & 0o777) == "0o600"
        client = ReportClient(endpoint.address)
        client.ready("s1", {"s1-eth2": 2})
        endpoint.wait_ready(["s1"], timeout=2)
        sent = PortEvent("s1", 2, False, detected_ns=10, switchover_ns=20, error="")
        client.port_event(sent)
        assert got.get(timeout=2) == sent
        client.close()
    finally:
        endpoint.close()
    assert not (tmp_path / "r.sock").exists()


def test_a_report_address_off_this_machine_is_refused():
    from controller.port_reports import ReportAddressError, parse_address

    assert parse_address("127.0.0.1:5000")[1] == ("127.0.0.1", 5000)
    for bad in ("10.0.0.1:5000", "example.org:5000", "127.0.0.1"):
        with pytest.raises(ReportAddressError):
            parse_address(bad)


def test_waiting_for_an_agent_that_never_reports_names_it(tmp_path):
    from controller.port_reports import AgentNotReady, ReportEndpoint

    endpoint = ReportEndpoint("127.0.0.1:0", lambda _e: None).start()
    try:
        with pytest.raises(AgentNotReady, match="s2"):
            endpoint.wait_ready(["s2"], timeout=0.3)
    finally:
        endpoint.close()


def test_agent_process_switches_over_then_reports_to_the_sm_socket(
        smt_veth, fake_switch, frr_p4info_path, bmv2_json, tmp_path):
    """`python -m controller.agent` against a (fake) switch: ready, then carrier loss ->
    port marked down over its own connection -> a PortEvent on the SM's socket."""
    from controller.port_reports import ReportEndpoint

    watched, peer = smt_veth
    _server, address = fake_switch
    sm_conn = SwitchConnection("s1", address, device_id=1)
    sm_conn.set_pipeline(frr_p4info_path, bmv2_json)
    reports: queue.Queue[PortEvent] = queue.Queue()
    endpoint = ReportEndpoint(str(tmp_path / "r.sock"), reports.put).start()
    log = open(tmp_path / "agent.log", "wb")  # noqa: SIM115 -- closed with the process
    agent = subprocess.Popen(
        [sys.executable, "-m", "controller.agent", "--switch", "s1", "--grpc", address,
         "--device-id", "1", "--p4info", str(frr_p4info_path), "--ports", f"{watched}=3",
         "--report", endpoint.address], stdout=log, stderr=subprocess.STDOUT)
    try:
        endpoint.wait_ready(["s1"], timeout=30,
                            failed=lambda: None if agent.poll() is None else
                            (tmp_path / "agent.log").read_text())
        assert endpoint.ready["s1"]["pid"] == agent.pid
        cut_ns = time.time_ns()
        ip("link", "set", peer, "down")
        down = reports.get(timeout=3)
        assert (down.switch, down.port, down.up, down.error) == ("s1", 3, False, "")
        assert read_down_ports(sm_conn) == {3}
        assert down.detected_ns >= cut_ns and down.switchover_ns >= down.detected_ns
        ip("link", "set", peer, "up")
        assert reports.get(timeout=3).up
    finally:
        agent.terminate()  # by PID: the process this test started
        assert agent.wait(5) == 0
        log.close()
        endpoint.close()
        sm_conn.close()
