"""Subnet administration without switches: the SA frame codec, the SA's answers and REPORTs
against fake switch connections, and the host client against the SA over a socket pair."""

from __future__ import annotations

import queue
import socket
import threading

import pytest
from scapy.layers.l2 import Ether

from controller.agent import PortEvent
from controller.p4runtime_client import PacketIn
from controller.routing.minhop import MinHop
from controller.sa import SWITCH_MAC_PREFIX, SubnetAdministrator
from controller.sm import SubnetManager
from topologies.generators import build
from traffic import sa_client
from traffic.frames import (
    PATH_RECORD,
    SA,
    SA_CODEC,
    SA_MAX_RECORDS,
    PathRecord,
    SaFrameError,
    SaMessage,
    SaMethod,
    SaStatus,
    mac_to_int,
    parse_sa_frame,
    sa_frame,
)

H1_MAC = "02:00:00:00:00:01"

# ------------------------------------------------------------------------ the codec


def test_a_path_record_answer_survives_the_round_trip():
    record = PathRecord(dlid=3, sl=1, slid=1, sguid=0x2C90300100001, dguid=0x2C90300100003,
                        dname="h3", dmac="02:00:00:00:00:03", mtu=5, rate=3)
    frame = sa_frame(SaMethod.GET_RESP, 0xDEAD_BEEF_0000_0001, [record], src_mac=0x0200_0000_0001,
                     dst_mac=mac_to_int(H1_MAC), dlid=1)
    message = parse_sa_frame(frame)
    assert message == SaMessage(SaMethod.GET_RESP, 0xDEAD_BEEF_0000_0001, SaStatus.OK,
                                (record,), "02:00:00:00:00:01", 0)
    assert len(frame) == SA_CODEC.size + 44
    assert frame[15] == 5  # LRH kind SA, where the switch looks


def test_scapy_dissects_what_the_codec_builds():
    records = [PathRecord(dlid=n, sl=n % 2, dname=f"h{n}") for n in (2, 3)]
    frame = Ether(sa_frame(SaMethod.REPORT, 9, records) + b"\0" * 20)  # with Ethernet padding
    assert frame[SA].method == SaMethod.REPORT and frame[SA].count == 2
    dissected = [layer for layer in frame.iterpayloads() if isinstance(layer, PATH_RECORD)]
    assert [(r.dlid, r.sl) for r in dissected] == [(2, 0), (3, 1)]


def test_an_error_answer_has_a_status_and_no_record():
    message = parse_sa_frame(sa_frame(SaMethod.GET_RESP, 5, [], SaStatus.NO_SUCH_DESTINATION))
    assert (message.status, message.records) == (SaStatus.NO_SUCH_DESTINATION, ())


def test_a_report_holds_at_most_one_frame_of_records():
    records = [PathRecord(dlid=n) for n in range(1, SA_MAX_RECORDS + 1)]
    assert len(sa_frame(SaMethod.REPORT, 1, records)) <= 1514
    with pytest.raises(ValueError, match="do not fit"):
        sa_frame(SaMethod.REPORT, 1, [*records, PathRecord(dlid=99)])


@pytest.mark.parametrize("mangle,error", [
    (lambda f: f[:30], "at least"),
    (lambda f: f[:36] + f[36:-1], "announces 1 path records"),
    (lambda f: f[:22] + b"\x42" + f[23:], "unknown SA method"),
    (lambda f: f[:24] + b"\x00\x99" + f[26:], "unknown SA attribute"),
    (lambda f: f[:15] + b"\x01" + f[16:], "not an SA frame"),
])
def test_malformed_frames_are_refused_with_the_reason(mangle, error):
    frame = sa_frame(SaMethod.GET, 1, [PathRecord(dname="h2")])
    with pytest.raises(SaFrameError, match=error):
        parse_sa_frame(mangle(frame))


def test_host_names_longer_than_the_field_are_refused():
    with pytest.raises(ValueError, match="longer than 16 bytes"):
        sa_frame(SaMethod.GET, 1, [PathRecord(dname="a-very-long-host-name")])


# ------------------------------------------------------------------ the SA, fake switches


class FakeConnection:
    """What the SA uses of a SwitchConnection: packet-ins in, packet-outs recorded."""

    def __init__(self) -> None:
        self.packet_ins: queue.Queue[PacketIn] = queue.Queue()
        self.sent: list[tuple[int, bytes]] = []
        self.on_packet_out = None

    def packet_out(self, payload: bytes, metadata: dict[str, int]) -> None:
        self.sent.append((metadata["egress_port"], payload))
        if self.on_packet_out is not None:
            self.on_packet_out(payload, metadata)


def subnet(topology: str) -> tuple[SubnetManager, dict[str, FakeConnection]]:
    fabric = build(topology)
    conns = {s.name: FakeConnection() for s in fabric.switches}
    macs = {h.name: f"02:00:00:00:00:{int(h.name[1:]):02x}" for h in fabric.hosts}
    sm = SubnetManager(fabric, conns, engine=MinHop(), host_macs=macs)
    sm.assign_lids()
    sm.compute_routes()
    return sm, conns


def ask(sa: SubnetAdministrator, conns, switch: str, port: int, dst: PathRecord,
        tid: int = 7, slid: int = 0) -> tuple[int, SaMessage]:
    """A GET from the host at (switch, port); the port the answer left by and the answer."""
    conns[switch].sent.clear()
    query = sa_frame(SaMethod.GET, tid, [dst], src_mac=mac_to_int(H1_MAC), slid=slid)
    sa.handle(switch, PacketIn(query, {"ingress_port": port, "reason": 5}))
    ((out_port, frame),) = conns[switch].sent
    return out_port, parse_sa_frame(frame)


def test_a_query_is_answered_out_of_the_port_it_came_in_with_the_sms_lid_and_sl():
    sm, conns = subnet("ring:4")  # minhop puts h4 on SL 1 to break the ring's cycle
    sa = SubnetAdministrator(sm)
    port, answer = ask(sa, conns, "s1", 1, PathRecord(dname="h4"), tid=0x1234)
    h1, h4 = sm.fabric.node("h1"), sm.fabric.node("h4")
    assert port == 1
    assert (answer.method, answer.tid, answer.status) == (SaMethod.GET_RESP, 0x1234, SaStatus.OK)
    assert answer.records == (PathRecord(dlid=sm.lids["h4"], sl=sm.vl_of[sm.lids["h4"]], slid=1,
                                         sguid=h1.guid, dguid=h4.guid, dname="h4",
                                         dmac="02:00:00:00:00:04"),)
    assert answer.records[0].sl == 1
    frame = SA_CODEC.unpack(conns["s1"].sent[0][1])
    assert (frame.dst_addr, frame.src_addr, frame.dlid) == (mac_to_int(H1_MAC),
                                                            SWITCH_MAC_PREFIX | 1, 1)
    assert sa.log[-1]["requester"] == "h1" and sa.log[-1]["status"] == "OK"
    assert sa.log[-1]["sl"] == 1 and sa.log[-1]["destination"] == "h4"


def test_a_destination_may_be_named_by_guid_or_lid():
    sm, conns = subnet("line:3")
    sa = SubnetAdministrator(sm)
    h3 = sm.fabric.node("h3")
    by_guid = ask(sa, conns, "s1", 1, PathRecord(dguid=h3.guid))[1].records[0]
    by_lid = ask(sa, conns, "s1", 1, PathRecord(dlid=sm.lids["h3"]))[1].records[0]
    assert by_guid == by_lid and by_guid.dname == "h3"


def test_an_unknown_destination_is_answered_with_an_error_status():
    sm, conns = subnet("line:2")
    sa = SubnetAdministrator(sm)
    for dst in (PathRecord(dname="h9"), PathRecord(dguid=0x1234), PathRecord(dlid=99),
                PathRecord(dlid=sm.lids["s2"])):  # a switch is not a destination
        _port, answer = ask(sa, conns, "s1", 1, dst)
        assert (answer.status, answer.records) == (SaStatus.NO_SUCH_DESTINATION, ())
    assert sa.log[0]["status"] == "NO_SUCH_DESTINATION" and sa.log[0]["destination"] == "h9"


def test_a_query_naming_nothing_is_a_bad_request():
    sm, conns = subnet("line:2")
    _port, answer = ask(SubnetAdministrator(sm), conns, "s1", 1, PathRecord())
    assert answer.status == SaStatus.BAD_REQUEST


def test_a_destination_cut_off_by_failed_links_has_no_path():
    sm, conns = subnet("line:3")
    sa = SubnetAdministrator(sm)
    sm.failed_links.add(sm.link_at("s2", 3))  # s2 - s3: h3 is unreachable from s1
    sm.compute_routes()
    sa.publish()
    assert ask(sa, conns, "s1", 1, PathRecord(dname="h3"))[1].status == SaStatus.NO_PATH
    assert ask(sa, conns, "s1", 1, PathRecord(dname="h2"))[1].status == SaStatus.OK


def test_a_host_asking_for_itself_learns_its_own_lid():
    sm, conns = subnet("line:2")
    record = ask(SubnetAdministrator(sm), conns, "s2", 1, PathRecord(dname="h2"))[1].records[0]
    assert record.slid == record.dlid == sm.lids["h2"]


def test_frames_that_are_not_sa_are_ignored():
    sm, conns = subnet("line:2")
    sa = SubnetAdministrator(sm)
    from controller.discovery import hello_frame
    sa.handle("s1", PacketIn(hello_frame(1), {"ingress_port": 1}))
    assert sa.ignored == 1 and not conns["s1"].sent and not sa.log


def _reroute_ring(sm: SubnetManager) -> dict:
    """The s4 - s1 cable fails: the ring becomes a line, h4 no longer needs SL 1."""
    sm.install_routes = lambda routes=None, backups=None: {}  # no switches to write to
    return sm.handle_port_event(PortEvent("s1", 3, False, 1, 0))


def test_after_a_global_reroute_every_host_gets_a_report_of_the_changed_sl():
    sm, conns = subnet("ring:4")
    sm.sa = SubnetAdministrator(sm)
    record = _reroute_ring(sm)
    assert (record["sa_changed_paths"], record["sa_reports_sent"]) == (1, 3)
    for host in ("h1", "h2", "h3"):
        switch, port = sm.fabric.host_switch(host)
        ((out_port, frame),) = conns[switch].sent
        notice = parse_sa_frame(frame)
        assert out_port == port and notice.method == SaMethod.REPORT
        assert [(r.dname, r.dlid, r.sl, r.slid) for r in notice.records] == \
            [("h4", sm.lids["h4"], 0, sm.lids[host])]
    assert not conns["s4"].sent  # h4's own path to itself did not change anything for it
    # a query now gets the new SL, like the REPORT said
    assert ask(sm.sa, conns, "s1", 1, PathRecord(dname="h4"))[1].records[0].sl == 0


def test_a_reroute_that_changes_no_lid_or_sl_reports_nothing():
    sm, conns = subnet("leafspine:2,2,1")
    sm.sa = SubnetAdministrator(sm)
    sm.install_routes = lambda routes=None, backups=None: {}
    record = sm.handle_port_event(PortEvent("s1", 2, False, 1, 0))
    assert (record["sa_changed_paths"], record["sa_reports_sent"]) == (0, 0)
    assert not any(conn.sent for conn in conns.values())


def test_reports_are_resent_until_acknowledged_then_given_up():
    sm, conns = subnet("ring:4")
    sa = sm.sa = SubnetAdministrator(sm, report_retry_s=1.0, report_tries=3)
    _reroute_ring(sm)
    pending = sa.pending_reports
    assert sorted(pending.values()) == ["h1", "h2", "h3"]
    h1_tid = next(tid for tid, host in pending.items() if host == "h1")
    ack = sa_client.report_ack(SaMessage(SaMethod.REPORT, h1_tid), H1_MAC)
    sa.handle("s1", PacketIn(ack, {"ingress_port": 1}))
    assert sorted(sa.pending_reports.values()) == ["h2", "h3"]
    now = 1e12  # far after every deadline
    assert sa.resend_due(now) == 2 and len(conns["s2"].sent) == 2
    assert sa.resend_due(now + 2) == 2  # third and last try
    assert sa.resend_due(now + 4) == 0 and sa.pending_reports == {}
    assert sa.reports_unacknowledged == 2 and len(conns["s1"].sent) == 1


# ------------------------------------------------------ the host client over a socket pair


@pytest.fixture
def wired_host():
    """(client socket, SA, fake connections): h1's socket reaches s1 port 1 of ring:4, and
    s1's packet-outs of port 1 reach h1's socket."""
    sm, conns = subnet("ring:4")
    sa = SubnetAdministrator(sm)
    host, wire = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    conns["s1"].on_packet_out = lambda payload, meta: meta["egress_port"] == 1 and \
        wire.send(payload)
    stop = threading.Event()

    def switch_side():
        wire.settimeout(0.05)
        while not stop.is_set():
            try:
                frame = wire.recv(2048)
            except TimeoutError:
                continue
            except OSError:
                return
            sa.handle("s1", PacketIn(frame, {"ingress_port": 1}))

    thread = threading.Thread(target=switch_side, daemon=True)
    thread.start()
    yield host, sa, conns
    stop.set()
    thread.join()
    host.close()
    wire.close()


def test_the_client_gets_the_path_from_the_sa(wired_host):
    host, sa, _conns = wired_host
    record = sa_client.query_path(host, H1_MAC, 0, "h4", timeout=2)
    assert (record.dname, record.dlid, record.sl, record.slid) == ("h4", 4, 1, 1)


def test_the_client_names_the_destination_in_an_error_status(wired_host):
    host, _sa, _conns = wired_host
    with pytest.raises(sa_client.SaQueryError, match="path to h9: the SA answered "
                                                     "NO_SUCH_DESTINATION") as info:
        sa_client.query_path(host, H1_MAC, 0, "h9", timeout=2)
    assert info.value.status == SaStatus.NO_SUCH_DESTINATION


def test_the_client_gives_up_after_its_retries_naming_the_destination():
    host, wire = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    with host, wire:
        with pytest.raises(sa_client.SaTimeout, match="path to h3: no answer from the SA "
                                                      "after 3 tries of 0.05 s"):
            sa_client.query_path(host, H1_MAC, 0, "h3", timeout=0.05, retries=3)
        queries = [parse_sa_frame(wire.recv(2048)) for _ in range(3)]
    assert len({q.tid for q in queries}) == 1  # a retry is the same transaction


def test_the_client_acknowledges_reports_and_hands_each_on_once(wired_host):
    host, sa, conns = wired_host
    sa.sm.sa = sa
    _reroute_ring(sa.sm)
    heard: list[SaMessage] = []
    sa.resend_due(1e12)  # a re-send before the host acknowledged: the same REPORT twice
    assert sa_client.listen(host, H1_MAC, 0.3, heard.append) == 1
    assert [(r.dname, r.sl) for r in heard[0].records] == [("h4", 0)]
    assert "h1" not in sa.pending_reports.values()


def test_the_sa_answers_path_queries_only_within_a_partition():
    from controller.partitions import parse_partitions

    sm, conns = subnet("ring:4")
    sm.partitions = parse_partitions("jobA=0x0001 : h1=full, h2 ;\n"
                                     "jobB=0x0002 : h3=full, h4=full ;\n"
                                     "storage=0x0003 : h2, h4 ;\n",  # two limited members
                                     [h.name for h in sm.fabric.hosts])
    sa = SubnetAdministrator(sm)
    assert ask(sa, conns, "s1", 1, PathRecord(dname="h2"))[1].status == SaStatus.OK
    for dst in ("h3", "h4"):
        _port, answer = ask(sa, conns, "s1", 1, PathRecord(dname=dst))
        assert (answer.status, answer.records) == (SaStatus.NO_PATH, ())
    switch, port = sm.fabric.host_switch("h2")
    assert ask(sa, conns, switch, port, PathRecord(dname="h4"))[1].status == SaStatus.NO_PATH
    # a reroute's REPORT about h4 reaches only h3, its partition peer
    sm.sa = sa
    assert _reroute_ring(sm)["sa_reports_sent"] == 1
    switch, _port = sm.fabric.host_switch("h3")
    assert conns[switch].sent
