"""The thin slice without Mininet: two embedded switches and two hosts in throwaway network
namespaces, configured by `fabriclab-sm`, with traffic from the sender captured by tcpdump.

    trt-h1:trt-h1e -- trt-s1p1 [s1] trt-s1p2 -- trt-s2p2 [s2] trt-s2p1 -- trt-h2e:trt-h2

The switches and the SM share the namespace trt-fab (P4Runtime on its loopback).
Asserts, from the capture, that every frame arrived once and in order, and, from the
switch counters, that frames to an unknown DLID were dropped and counted, so that
sent = received + counted drops. Root, tcpdump, the embedded compiler and switch needed.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import netns_lab as lab
import pytest

from traffic.analysis import ReceiverTrace, analyze
from traffic.capture import Capture

ROOT = Path(__file__).resolve().parents[2]
NS_FAB, NS_H1, NS_H2 = "trt-fab", "trt-h1", "trt-h2"
# (end a, namespace a, end b, namespace b)
VETHS = [("trt-h1e", NS_H1, "trt-s1p1", NS_FAB), ("trt-s1p2", NS_FAB, "trt-s2p2", NS_FAB),
         ("trt-h2e", NS_H2, "trt-s2p1", NS_FAB)]
MAC = {"h1": "02:00:00:00:00:01", "h2": "02:00:00:00:00:02"}
GRPC = {"s1": "127.0.0.1:50051", "s2": "127.0.0.1:50052"}  # inside trt-fab only




def sm(*args: str, check: bool = True):
    return lab.run(sys.executable, "-m", "controller.cli", *args, ns=NS_FAB, check=check)


@pytest.fixture
def compiled(tmp_path):
    return lab.compile_fabric(tmp_path / "build", ("ip", "tcpdump"))


@pytest.fixture
def fabric_netns(compiled, tmp_path):
    procs: list[subprocess.Popen] = []
    try:
        lab.build((NS_FAB, NS_H1, NS_H2), VETHS, {(NS_H1, "trt-h1e"): MAC["h1"],
                                                  (NS_H2, "trt-h2e"): MAC["h2"]})
        for device_id, name in ((1, "s1"), (2, "s2")):
            log = tmp_path / f"{name}.log"
            with open(log, "w") as out:
                procs.append(subprocess.Popen(
                    ["ip", "netns", "exec", NS_FAB, sys.executable, "-m", "p4switch.cli",
                     "--device-id", str(device_id), "-i", f"1@trt-{name}p1",
                     "-i", f"2@trt-{name}p2", "--cpu-port", "510",
                     "--grpc-server-addr", GRPC[name], "--no-p4"],
                    stdout=out, stderr=subprocess.STDOUT, cwd=ROOT))
        for name, proc in zip(("s1", "s2"), procs, strict=True):
            lab.wait_for(tmp_path / f"{name}.log", "running", proc)
        yield compiled
    finally:
        for proc in procs:  # by PID: `ip netns exec` execs the switch itself
            lab.stop(proc)
        lab.teardown((NS_FAB, NS_H1, NS_H2), VETHS)


def send(tmp_path, flow: int, dlid: int, count: int) -> Path:
    log = tmp_path / f"h1.flow{flow}.csv"
    lab.run(sys.executable, "-m", "traffic.sender", "--iface", "trt-h1e", "--src-mac", MAC["h1"],
        "--dst-mac", MAC["h2"], "--slid", "1", "--dlid", str(dlid), "--flow", str(flow),
        "--count", str(count), "--rate", "1000", "--payload", "32", "--log", str(log),
        ns=NS_H1)
    return log


@pytest.mark.slow
def test_sm_configures_the_fabric_and_every_frame_is_accounted_for(fabric_netns, tmp_path):
    p4info, bmv2_json = fabric_netns
    switches = [arg for name, addr in GRPC.items() for arg in ("--switch", f"{name}={addr}")]
    book = tmp_path / "address_book.json"
    sm("up", "line:2", *switches, "--p4info", str(p4info), "--bmv2-json", str(bmv2_json),
       "--address-book", str(book))
    h2 = json.loads(book.read_text())["hosts"]["h2"]

    found = sm("discover", "line:2", *switches, "--p4info", str(p4info), "--links-only",
               "--quiet", "0.5", check=False)
    assert found.returncode == 0, found.stdout + found.stderr
    assert "link s1:2 -> s2:2" in found.stdout and "link s2:2 -> s1:2" in found.stdout

    pcap = tmp_path / "h2.pcap"
    with Capture("trt-h2e", pcap, spawn=["ip", "netns", "exec", NS_H2], direction="in") as cap:
        good = send(tmp_path, flow=1, dlid=h2["lid"], count=200)
        unknown = send(tmp_path, flow=9, dlid=99, count=5)
        time.sleep(0.5)  # let the last frames cross both switches
    drops_out = json.loads(sm("drops", "line:2", *switches, "--p4info", str(p4info)).stdout)
    switch_drops = {name: {(c["port"], c["reason"]): (c["packets"], c["bytes"]) for c in cells}
                    for name, cells in drops_out.items()}

    m = analyze([good, unknown], [ReceiverTrace(pcap, dlid=h2["lid"])], [cap.stats],
                switch_drops=switch_drops)
    flow1, flow9 = m["flows"]["1"], m["flows"]["9"]
    assert (flow1["sent"], flow1["received"], flow1["lost"], flow1["reordered"],
            flow1["duplicates"]) == (200, 200, 0, 0, 0)
    assert (flow9["sent"], flow9["lost"]) == (5, 5)
    assert switch_drops["s1"][(1, "no_route")][0] == 5
    assert m["unexplained_loss"] == 0 and m["partial"] is False
