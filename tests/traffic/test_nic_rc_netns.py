"""The NIC emulator's RC transport, two NICs back to back in throwaway namespaces (root).

Frames the receiver's buffer drops (LOSSY, stalled receiver) are recovered by
NAK / timeout and go-back-N retransmission: every PSN is delivered exactly once,
in order. On a lossless link RC only adds ACKs: nothing is sent twice.
"""

from __future__ import annotations

import time

import pytest
from traffic_netns import NicProcess, namespace_pair

from traffic.frames import DATA_CODEC, OPCODE_RC_ACK, OPCODE_RC_SEND
from traffic.nic import read_recv_log
from traffic.pcap import read_frames
from traffic.sender import read_log

NS_TX, NS_RX = "nctrc-a", "nctrc-b"
RATE = 2000
START_LEAD_S = 1.0
COUNT = 600


@pytest.fixture
def link():
    yield from namespace_pair(NS_TX, NS_RX)


def run_rc(link, tmp_path, mode, *, rx_actions=(), duration=4.0, rx_extra=(), tx_extra=()):
    tx_host, rx_host = link
    start = time.time() + START_LEAD_S
    expect = [{"coll_id": 0, "step": 0, "slid": tx_host.lid, "frames": COUNT}]
    rx = NicProcess(rx_host, mode, RATE, tmp_path,
                    {"name": "rx", "transport": "rc", "actions": list(rx_actions),
                     "recvs": expect}, duration, start, extra=rx_extra, until_done=True)
    tx = NicProcess(tx_host, mode, RATE, tmp_path,
                    {"name": "tx", "transport": "rc",
                     "flows": [{"flow": 7, "dst_mac": rx_host.mac, "dlid": rx_host.lid,
                                "count": COUNT}]}, duration, start, extra=tx_extra,
                    until_done=True)
    try:
        rx.wait_ready()
        tx.wait_ready()
        return tx.wait(), rx.wait()
    finally:
        tx.kill()
        rx.kill()


def accepted_psns(tmp_path):
    return [r.psn for r in read_recv_log(tmp_path / "rx.recv.csv") if r.admitted == 1]


def test_rc_recovers_every_frame_a_stalled_lossy_receiver_dropped(link, tmp_path):
    tx, rx = run_rc(link, tmp_path, "lossy", rx_actions=[(0.1, "stall"), (0.4, "resume")],
                    rx_extra=("--buffer", "32"))
    assert rx["rx_drops"]["buffer_full"] > 100  # the stall made the receiver drop
    assert accepted_psns(tmp_path) == list(range(COUNT))  # each once, in order
    assert rx["delivered"] == COUNT and rx["done"] and tx["done"]
    assert tx["rc"]["retransmitted"] >= rx["rx_drops"]["buffer_full"]
    assert tx["rc"]["go_backs"] >= 1 and tx["rc"]["flows_failed"] == 0
    assert tx["rc"]["naks_received"] + tx["rc"]["timeouts"] >= 1
    assert tx["unacknowledged"] == 0
    # the sender log has one row per transmission: every PSN, some of them twice or more
    rows = list(read_log(tmp_path / "tx.sent.csv"))
    assert len(rows) == COUNT + tx["rc"]["retransmitted"]
    assert {psn for _flow, psn, _ts in rows} == set(range(COUNT))


def test_rc_on_a_lossless_link_only_adds_acks(link, tmp_path):
    tx, rx = run_rc(link, tmp_path, "credit")
    assert accepted_psns(tmp_path) == list(range(COUNT))
    assert tx["rc"]["retransmitted"] == 0 and tx["rc"]["timeouts"] == 0
    assert rx["rc"]["acks_sent"] >= COUNT // 16  # one per rc_ack_every frames at least
    assert tx["rc"]["acks_received"] == rx["rc"]["acks_sent"]
    assert rx["rc"]["naks_sent"] == 0 and rx["rc"]["out_of_sequence"] == 0
    assert tx["done"] and rx["done"] and tx["unacknowledged"] == 0


def test_rc_frames_on_the_wire(link, tmp_path):
    """Data: RC SEND to the receiver; ACKs: RC Acknowledge to the sender, psn cumulative."""
    from traffic.capture import Capture

    tx_host, rx_host = link
    fabric = b"\x88\xb5"

    def decoded(pcap):
        return [DATA_CODEC.unpack(frame, 0) for _ts, frame in read_frames(pcap)
                if len(frame) >= DATA_CODEC.size and frame[12:14] == fabric and frame[15] == 1]

    with Capture(tx_host.iface, tmp_path / "tx.pcap", spawn=tx_host.prefix, direction="in"), \
            Capture(rx_host.iface, tmp_path / "rx.pcap", spawn=rx_host.prefix, direction="in"):
        tx, _rx = run_rc(link, tmp_path, "lossy")
    acks, data = decoded(tmp_path / "tx.pcap"), decoded(tmp_path / "rx.pcap")
    assert acks and all(a.opcode == OPCODE_RC_ACK and a.dlid == tx_host.lid and a.flow_id == 7
                        and a.chunk == 0 for a in acks)
    assert [a.psn for a in acks] == sorted(a.psn for a in acks)
    assert acks[-1].psn == COUNT  # the last ACK: every PSN before COUNT arrived
    # one frame per transmission the sender counts: a timeout's resend on a loaded machine
    # is on the wire too (601 of 600 in one clean-clone run, psn 5 twice)
    assert len(data) == COUNT + tx["rc"]["retransmitted"]
    assert {d.psn for d in data} == set(range(COUNT))
    assert all(d.opcode == OPCODE_RC_SEND and d.dlid == rx_host.lid for d in data)


@pytest.mark.parametrize("retransmission", ["go-back-n", "selective"])
def test_a_burst_lost_on_the_link_is_resent_as_a_window_or_as_the_hole(link, tmp_path,
                                                                       retransmission):
    lost = 5
    tx, rx = run_rc(link, tmp_path, "lossy", rx_actions=[(0.1, f"drop_data {lost}")],
                    rx_extra=("--rc-retransmission", retransmission),
                    tx_extra=("--rc-retransmission", retransmission))
    assert rx["rx_drops"] == {"injected": lost}
    psns = accepted_psns(tmp_path)
    assert sorted(psns) == list(range(COUNT)), "every PSN accepted exactly once"
    assert rx["delivered"] == COUNT and rx["done"] and tx["done"]
    assert tx["rc"]["flows_failed"] == 0 and tx["unacknowledged"] == 0
    assert rx["rc"]["naks_sent"] >= 1 and tx["rc"]["nak_go_backs"] >= 1
    print(f"\n{retransmission}: {tx['rc']['retransmitted']} resent for {lost} lost, "
          f"{rx['rc']['out_of_sequence']} discarded, {rx['rc']['out_of_order_kept']} kept")
    if retransmission == "go-back-n":
        # the frames that followed the burst were discarded and sent again with it
        assert psns == list(range(COUNT)), "in order"
        assert rx["rc"]["out_of_sequence"] >= 1 and rx["rc"]["out_of_order_kept"] == 0
        assert tx["rc"]["retransmitted"] >= lost + rx["rc"]["out_of_sequence"]
    else:
        # the receiver kept them and named the hole: only the burst is sent again
        assert rx["rc"]["out_of_sequence"] == 0 and rx["rc"]["out_of_order_kept"] >= 1
        assert tx["rc"]["selective_resends"] >= 1
        assert tx["rc"]["retransmitted"] == lost
