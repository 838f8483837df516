"""Two NIC emulators back to back on a veth, in throwaway namespaces (root).

The sender transmits at the link rate; the receiver drains its buffer slower
(or stalls): lossless modes hold the sender back, LOSSY drops and counts.
"""

from __future__ import annotations

import time

import pytest
from scapy.contrib.mac_control import MACControlClassBasedFlowControl
from scapy.layers.l2 import Ether
from traffic_netns import NicProcess, namespace_pair, wait_for_socket

from traffic.capture import Capture
from traffic.faults import NicControl
from traffic.nic import read_recv_log
from traffic.pcap import read_frames
from traffic.sender import read_log

NS_TX, NS_RX = "nctnic-a", "nctnic-b"
RATE = 2000
START_LEAD_S = 1.0  # python + scapy start-up in a namespace, on a loaded machine
COUNT = 1000


@pytest.fixture
def link():
    yield from namespace_pair(NS_TX, NS_RX)


def run_pair(link, tmp_path, mode, *, drain_pps, count=COUNT, rx_actions=(), rx_extra=(),
             rx_control=None, during=None, duration=None):
    """tx sends `count` frames to rx at RATE; rx drains at drain_pps. Returns both summaries."""
    tx_host, rx_host = link
    start = time.time() + START_LEAD_S
    duration = duration or count / min(RATE, drain_pps) + 1.0
    # rx expects the whole flow, so both stop once it is delivered (--until-done)
    expect = [{"coll_id": 0, "step": 0, "slid": tx_host.lid, "frames": count}]
    rx = NicProcess(rx_host, mode, RATE, tmp_path,
                    {"name": "rx", "actions": list(rx_actions), "recvs": expect},
                    duration, start, extra=("--drain-pps", str(drain_pps), *rx_extra),
                    control=rx_control, until_done=True)
    tx = NicProcess(tx_host, mode, RATE, tmp_path,
                    {"name": "tx", "flows": [{"flow": 9, "dst_mac": rx_host.mac, "dlid": 2,
                                              "count": count}]}, duration, start,
                    until_done=True)
    try:
        rx.wait_ready()
        tx.wait_ready()
        if during:
            during(start)
        tx_summary, rx_summary = tx.wait(), rx.wait()
        assert max(tx_summary["late_start_ms"], rx_summary["late_start_ms"]) < 100, \
            "NIC start-up slower than START_LEAD_S: the timings of this test do not hold"
        return tx_summary, rx_summary
    finally:
        tx.kill()
        rx.kill()


def psns_received(tmp_path, admitted_only=True):
    return [r.psn for r in read_recv_log(tmp_path / "rx.recv.csv")
            if r.admitted or not admitted_only]


def test_lossy_drops_under_a_slow_receiver_and_counts_every_drop(link, tmp_path):
    tx, rx = run_pair(link, tmp_path, "lossy", drain_pps=RATE / 4)
    assert tx["sent"] == COUNT and tx["rate_kept"], tx["rate_reason"]
    assert rx["rx_drops"]["buffer_full"] > COUNT // 2
    assert rx["received"] == COUNT  # the wire lost nothing: the buffer did
    assert rx["delivered"] + rx["rx_dropped"] == tx["sent"]
    assert rx["socket_drops"] == 0


@pytest.mark.parametrize("mode", ["pfc", "credit"])
def test_lossless_modes_never_drop_under_a_slow_receiver(link, tmp_path, mode):
    tx, rx = run_pair(link, tmp_path, mode, drain_pps=RATE / 4)
    assert rx["rx_dropped"] == 0 and rx["delivered"] == COUNT
    assert psns_received(tmp_path) == list(range(COUNT))  # all, once, in order
    assert [psn for _f, psn, _t in read_log(tmp_path / "tx.sent.csv")] == list(range(COUNT))
    assert rx["peak_occupancy"] <= 64
    # held back to the receiver's pace: blocked about 3/4 of the time
    assert tx["flow_control"]["blocked_ms_total"] > 0.5 * COUNT / RATE * 3 * 1e3
    if mode == "pfc":
        assert rx["flow_control"]["pauses_sent"] > 0
        assert tx["flow_control"]["pauses_received"] == rx["flow_control"]["pauses_sent"]
        assert rx["flow_control"]["resumes_sent"] == rx["flow_control"]["pauses_sent"]
    else:
        assert rx["flow_control"]["credit_frames_sent"] > COUNT / 4 / 2
        assert tx["flow_control"]["pauses_received"] == 0


def test_credit_link_heals_after_credit_frames_are_dropped(link, tmp_path):
    # rx drops 5 credit frames in a row while tx is blocked on it: the refresh heals it.
    tx, rx = run_pair(link, tmp_path, "credit", drain_pps=RATE / 4,
                      rx_actions=[(0.1, "drop_credits 5")])
    assert rx["flow_control"]["credit_frames_dropped"] == 5
    assert rx["delivered"] == COUNT and rx["rx_dropped"] == 0
    assert tx["flows"]["9"]["jobs_done"] == 1


@pytest.mark.slow
def test_stalled_receiver_blocks_the_credit_sender(link, tmp_path):
    tx, rx = run_pair(link, tmp_path, "credit", drain_pps=RATE, count=1000,
                      rx_actions=[(0.1, "stall"), (1.1, "resume")], duration=2.5)
    assert rx["rx_dropped"] == 0 and rx["delivered"] == 1000
    assert tx["flow_control"]["blocked_ms_total"] > 900  # the whole stall
    assert max(r.recv_ns for r in read_recv_log(tmp_path / "rx.recv.csv")) - \
        min(r.recv_ns for r in read_recv_log(tmp_path / "rx.recv.csv")) > 1.0e9
    assert tx["flow_control"]["credit_requests_sent"] > 0  # it kept asking


def test_stalled_receiver_pauses_the_pfc_sender_with_valid_8021qbb_frames(link, tmp_path):
    tx_host, _ = link
    pcap = tmp_path / "tx.pcap"
    control = tmp_path / "rx.sock"

    def stall_by_control_socket(start):
        wait_for_socket(control)
        time.sleep(max(0.0, start + 0.1 - time.time()))
        NicControl(control).stall()
        time.sleep(1.0)
        NicControl(control).resume()

    with Capture(tx_host.iface, pcap, spawn=tx_host.prefix, direction="in") as cap:
        tx, rx = run_pair(link, tmp_path, "pfc", drain_pps=RATE, count=1000,
                          rx_control=control, during=stall_by_control_socket, duration=2.5)
    assert cap.stats.drops == 0
    assert rx["rx_dropped"] == 0 and rx["delivered"] == 1000
    assert tx["flow_control"]["blocked_ms_total"] > 900
    pauses = [Ether(frame) for _ts, frame in read_frames(pcap)
              if frame[12:14] == b"\x88\x08"]
    assert len(pauses) == rx["flow_control"]["pauses_sent"] + rx["flow_control"]["resumes_sent"]
    for p in pauses:
        assert p.dst == "01:80:c2:00:00:01" and p.type == 0x8808
        pfc = p[MACControlClassBasedFlowControl]
        assert pfc._op_code == 0x0101 and pfc.c0_enabled == 1
        assert pfc.c0_pause_time in (0xFFFF, 0)
    assert {p[MACControlClassBasedFlowControl].c0_pause_time for p in pauses} == {0xFFFF, 0}


@pytest.mark.slow
def test_a_pause_storm_stops_a_pfc_sender_until_it_ends(link, tmp_path):
    # rx emits continuous pauses from 0.1 s to 0.6 s while draining normally.
    tx, rx = run_pair(link, tmp_path, "pfc", drain_pps=RATE, count=1000,
                      rx_actions=[(0.1, "pause_storm on"), (0.6, "pause_storm off")],
                      duration=2.0)
    assert rx["flow_control"]["storm_pauses_sent"] > 100
    assert tx["flow_control"]["pauses_received"] == rx["flow_control"]["storm_pauses_sent"]
    assert tx["flow_control"]["blocked_ms_total"] > 400
    assert rx["delivered"] == 1000
