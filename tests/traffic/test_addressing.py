"""A NIC learns its LID and its peers' addresses from the SM's Subnet Administrator:
the FLOWS.json it is given names hosts (traffic/addressing.py), the SA answers over its
port. Here the SA runs against fake switch connections and the NIC's port is one end
of a socket pair whose other end is switch s1's port 1 (h1's), as in test_sa.py."""

from __future__ import annotations

import json
import queue
import socket
import threading
import time

import pytest

from controller.p4runtime_client import PacketIn
from controller.routing.minhop import MinHop
from controller.sa import SubnetAdministrator
from controller.sm import SubnetManager
from topologies.generators import build
from traffic.addressing import Peer, resolve, sa_lookup
from traffic.collectives import CollectiveSpec, Endpoint, rank_flows, rank_workload, schedule
from traffic.nic_config import NicConfigError, load_flows_file

H1_MAC = "02:00:00:00:00:01"


class FakeConnection:
    def __init__(self) -> None:
        self.packet_ins: queue.Queue[PacketIn] = queue.Queue()
        self.on_packet_out = None

    def packet_out(self, payload: bytes, metadata: dict[str, int]) -> None:
        if self.on_packet_out is not None:
            self.on_packet_out(payload, metadata)


@pytest.fixture
def ring():
    """(SM of ring:4 with minhop: h4 on SL 1, the h1 port's socket or None for an SA that
    is not served)."""
    fabric = build("ring:4")
    conns = {s.name: FakeConnection() for s in fabric.switches}
    macs = {h.name: f"02:00:00:00:00:{int(h.name[1:]):02x}" for h in fabric.hosts}
    sm = SubnetManager(fabric, conns, engine=MinHop(), host_macs=macs)
    sm.assign_lids()
    sm.compute_routes()
    host, wire = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    stop = threading.Event()
    served = []

    def serve():
        sa = SubnetAdministrator(sm)
        served.append(sa)
        conns["s1"].on_packet_out = lambda payload, meta: meta["egress_port"] == 1 and \
            wire.send(payload)
        wire.settimeout(0.05)
        while not stop.is_set():
            try:
                frame = wire.recv(2048)
            except TimeoutError:
                continue
            except OSError:
                return
            sa.handle("s1", PacketIn(frame, {"ingress_port": 1}))

    threads = []

    def start_sa():
        threads.append(threading.Thread(target=serve, daemon=True))
        threads[-1].start()
        return served

    yield sm, host, start_sa
    stop.set()
    for t in threads:
        t.join()
    host.close()
    wire.close()


def _ring_workload(tmp_path, names):
    spec = CollectiveSpec("ring_allreduce", n=4, message_bytes=4 * 2048, payload=1024)
    path = tmp_path / "h1.flows.json"
    path.write_text(json.dumps(rank_workload(spec, schedule(spec), 0, names)))
    return spec, path


def _lookup(host, timeout=0.5, retries=3):
    return sa_lookup("h1-eth0", H1_MAC, timeout, retries, open_socket=lambda _iface: host.dup())


def test_the_nic_learns_its_lid_and_its_peers_from_the_sa(ring, tmp_path):
    sm, host, start_sa = ring
    (sa,) = start_sa()
    names = ["h1", "h2", "h3", "h4"]
    spec, path = _ring_workload(tmp_path, names)
    assert "dlid" not in path.read_text() and "slid" not in path.read_text()
    port, workload = load_flows_file(path, _lookup(host), "h1")
    assert port["lid"] == sm.lids["h1"]
    assert port["addresses"]["peers"]["h4"] == {"lid": sm.lids["h4"], "sl": 1,
                                               "mac": "02:00:00:00:00:04"}
    # what the SA told the NIC is what the SM's address book says: the NIC runs exactly
    # what a file addressed from the book would have made it run
    book = sm.address_book()["hosts"]
    want = rank_flows(spec, schedule(spec), 0, [
        Endpoint(n, book[n]["lid"], book[n]["mac"], book[n]["sl"]) for n in names])
    _port, from_book = load_flows_file(_write(tmp_path / "book.json", want))
    assert workload == from_book
    assert dict(port["sl_of_lid"])[sm.lids["h4"]] == 1  # ACKs to h4 on its SL
    # the SA logs an answer after sending it: the NIC may have it before the log does
    deadline = time.monotonic() + 5
    while len(sa.log) < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    asked = {entry["destination"] for entry in sa.log}
    assert asked == {"h1", "h2", "h4"}  # itself, and the ring neighbours it names


def _write(path, data):
    path.write_text(json.dumps(data))
    return path


def test_a_nic_whose_sa_does_not_answer_says_so(ring, tmp_path):
    _sm, host, _start_sa = ring  # the SA is not served
    _spec, path = _ring_workload(tmp_path, ["h1", "h2", "h3", "h4"])
    with pytest.raises(NicConfigError, match=r"h1: the subnet administrator did not answer "
                       r"on h1-eth0 \(path to h1: no answer from the SA after 2 tries of "
                       r"0.05 s\); is the SM serving the SA"):
        load_flows_file(path, _lookup(host, timeout=0.05, retries=2), "h1")


def test_a_peer_the_sa_does_not_know_is_named(ring, tmp_path):
    _sm, host, start_sa = ring
    start_sa()
    _spec, path = _ring_workload(tmp_path, ["h1", "h2", "h3", "h9"])
    with pytest.raises(NicConfigError, match="path to h9: the SA answered NO_SUCH_DESTINATION"):
        load_flows_file(path, _lookup(host), "h1")


def test_a_file_naming_hosts_needs_an_sa():
    with pytest.raises(NicConfigError, match="names hosts .* no SA to ask"):
        load_flows_file(_write_tmp({"name": "h1", "addresses": "sa", "flows": []}))


def _write_tmp(data):
    import tempfile

    f = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)  # noqa: SIM115
    f.write(json.dumps(data))
    f.close()
    return f.name


def test_forged_addresses_stay_and_the_workload_may_set_the_acks_sl():
    data = {"name": "h1", "addresses": "sa", "sl": 0, "peer_sl": {"h2": 3},
            "flows": [{"flow": 1, "dst": "h2", "count": 5},
                      {"flow": 2, "dlid": 0xBEEF, "dst_mac": "02:00:00:00:00:09", "count": 5}],
            "recvs": [{"coll_id": 0, "step": 0, "src": "h2", "frames": 5}]}
    out = resolve(data, 1, {"h2": Peer("h2", 2, "02:00:00:00:00:02", 0)})
    assert out["flows"][0] == {"flow": 1, "count": 5, "dlid": 2,
                               "dst_mac": "02:00:00:00:00:02", "sl": 0, "after": []}
    assert out["flows"][1]["dlid"] == 0xBEEF
    assert out["recvs"] == [{"coll_id": 0, "step": 0, "slid": 2, "frames": 5}]
    assert out["sl_of_lid"] == {"2": 3} and out["lid"] == 1 and "addresses" not in out
