"""Sender -> veth -> tcpdump -> analysis, inside two throwaway network namespaces (root)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from traffic.analysis import ReceiverTrace, analyze
from traffic.capture import Capture, CaptureError, parse_tcpdump_stats

NS_TX, NS_RX = "trt-tx", "trt-rx"
IF_TX, IF_RX = "trt-tx0", "trt-rx0"
MAC_TX, MAC_RX = "02:00:00:00:00:01", "02:00:00:00:00:02"


def ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True)


@pytest.fixture
def veth_pair():
    if os.geteuid() != 0 or not shutil.which("tcpdump") or not shutil.which("ip"):
        pytest.skip("needs root, ip and tcpdump")
    try:
        ip("netns", "add", NS_TX)
        ip("netns", "add", NS_RX)
        ip("link", "add", IF_TX, "type", "veth", "peer", "name", IF_RX)
        ip("link", "set", IF_TX, "netns", NS_TX)
        ip("link", "set", IF_RX, "netns", NS_RX)
        ip("-n", NS_TX, "link", "set", IF_TX, "address", MAC_TX, "up")
        ip("-n", NS_RX, "link", "set", IF_RX, "address", MAC_RX, "up")
        yield
    finally:
        for ns in (NS_TX, NS_RX):  # deleting a namespace deletes its end of the veth
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        subprocess.run(["ip", "link", "del", IF_TX], capture_output=True)


def test_all_frames_arrive_once_and_in_order_over_a_veth(veth_pair, tmp_path):
    log = tmp_path / "h1.flow5.csv"
    pcap = tmp_path / "h2.pcap"
    with Capture(IF_RX, pcap, spawn=["ip", "netns", "exec", NS_RX]) as cap:
        sender = subprocess.run(
            ["ip", "netns", "exec", NS_TX, sys.executable, "-m", "traffic.sender",
             "--iface", IF_TX, "--src-mac", MAC_TX, "--dst-mac", MAC_RX, "--slid", "1",
             "--dlid", "2", "--flow", "5", "--count", "300", "--rate", "3000",
             "--payload", "32", "--log", str(log)],
            capture_output=True, text=True, timeout=30)
        assert sender.returncode == 0, sender.stderr
    assert cap.stats.captured == 300 and cap.stats.drops == 0
    m = analyze([log], [ReceiverTrace(pcap, dlid=2)], [cap.stats])
    assert (m["sent"], m["received"], m["lost"], m["reordered"], m["duplicates"]) == \
        (300, 300, 0, 0, 0)
    assert m["rate_kept"] is True and m["partial"] is False


def test_capture_on_a_missing_interface_fails_with_tcpdumps_reason(tmp_path):
    if os.geteuid() != 0 or not shutil.which("tcpdump"):
        pytest.skip("needs root and tcpdump")
    with pytest.raises(CaptureError, match="trt-nonexistent"):
        Capture("trt-nonexistent", tmp_path / "x.pcap").start(timeout=5)


def test_tcpdump_statistics_are_parsed():
    stats = parse_tcpdump_stats("12 packets captured\n15 packets received by filter\n"
                                "3 packets dropped by kernel\n", "x.pcap")
    assert (stats.captured, stats.received_by_filter, stats.drops) == (12, 15, 3)
