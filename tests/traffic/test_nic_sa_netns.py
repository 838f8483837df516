"""A NIC applies the SM's REPORT of changed paths (root, throwaway namespaces).

The SM's Subnet Administrator (controller/sa.py) sends every host a REPORT after
a global reroute changed a destination's SL. The NIC acknowledges it (once per
copy) and sends that start later on the new SL, hence on its VL.
"""

from __future__ import annotations

import subprocess
import sys
import time

import pytest
from traffic_netns import ROOT, NicProcess, namespace_pair

from traffic.capture import Capture
from traffic.frames import DATA_CODEC, Kind, SaMethod, parse_sa_frame
from traffic.pcap import read_frames

NS_TX, NS_RX = "nctsa-a", "nctsa-b"
RATE = 2000
START_LEAD_S = 1.0


@pytest.fixture
def link():
    yield from namespace_pair(NS_TX, NS_RX)


INJECT = """
import socket, sys
from traffic.frames import PathRecord, SaMethod, mac_to_int, sa_frame
iface, dst, dlid, sl = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((iface, 0))
frame = sa_frame(SaMethod.REPORT, 77, [PathRecord(dlid=dlid, sl=sl)], dst_mac=mac_to_int(dst))
for _ in range(2):  # the SA re-sends until acknowledged: a copy must be applied once
    s.send(frame)
"""


def test_a_report_moves_later_sends_to_the_new_sl_and_is_acknowledged(link, tmp_path):
    tx_host, rx_host = link
    start = time.time() + START_LEAD_S
    rx = NicProcess(rx_host, "credit", RATE, tmp_path,
                    {"name": "rx", "vls": [0, 1],
                     "recvs": [{"coll_id": 0, "step": 0, "slid": 1, "frames": 40}]},
                    3.5, start, until_done=True)
    # two flows to the same LID: the first before the REPORT, the second after it (the
    # injector, a python that imports Scapy, takes up to a second to start)
    tx = NicProcess(tx_host, "credit", RATE, tmp_path,
                    {"name": "tx", "flows": [
                        {"flow": 1, "dst_mac": rx_host.mac, "dlid": rx_host.lid, "count": 20},
                        {"flow": 2, "dst_mac": rx_host.mac, "dlid": rx_host.lid, "count": 20,
                         "start_s": 2.0}]}, 3.5, start, until_done=True)
    with Capture(rx_host.iface, tmp_path / "rx.pcap", spawn=rx_host.prefix, direction="in"), \
            Capture(tx_host.iface, tmp_path / "tx-out.pcap", spawn=tx_host.prefix,
                    direction="out"):
        try:
            rx.wait_ready()
            tx.wait_ready()
            time.sleep(max(0.0, start + 0.3 - time.time()))
            subprocess.run(["ip", "netns", "exec", rx_host.ns, sys.executable, "-c", INJECT,
                            rx_host.iface, tx_host.mac, str(rx_host.lid), "1"],
                           check=True, cwd=ROOT, timeout=20)
            tx_summary, _rx_summary = tx.wait(), rx.wait()
        finally:
            tx.kill()
            rx.kill()
    assert [(c["dlid"], c["sl"]) for c in tx_summary["sa_changes"]] == [(rx_host.lid, 1)]
    data = [DATA_CODEC.unpack(f, 0) for _ts, f in read_frames(tmp_path / "rx.pcap")
            if len(f) >= DATA_CODEC.size and f[12:14] == b"\x88\xb5" and f[15] == Kind.DATA]
    assert {(d.sl, d.vl) for d in data if d.flow_id == 1} == {(0, 0)}
    assert {(d.sl, d.vl) for d in data if d.flow_id == 2} == {(1, 1)}
    assert len(data) == 40
    acks = [parse_sa_frame(f) for _ts, f in read_frames(tmp_path / "tx-out.pcap")
            if len(f) > 15 and f[12:14] == b"\x88\xb5" and f[15] == Kind.SA]
    assert [(a.method, a.tid) for a in acks] == [(SaMethod.REPORT_RESP, 77)] * 2
