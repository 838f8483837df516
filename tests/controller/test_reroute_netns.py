"""Fast reroute end to end: four embedded switches (leafspine:2,2,1) in a namespace, the SM
serving with a local agent per switch; a cable carrying a flow is cut and the receiver's
gap is measured from its capture.

    smt-h1 -- s1 --(port 2)-- s3 --(port 2)-- s2 -- smt-h2
               \\--(port 3)-- s4 --(port 2)--/

All switches, the SM and its agents share namespace smt-fab; hosts are smt-h1, smt-h2.
Everything is created with the prefix smt and deleted by name. Root, tcpdump, the
embedded compiler and switch needed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import netns_lab as lab
import pytest

from traffic.capture import Capture
from traffic.pcap import read_frames

ROOT = Path(__file__).resolve().parents[2]
NS_FAB, NS_H1, NS_H2 = "smt-fab", "smt-h1", "smt-h2"
# (end a, namespace a, end b, namespace b): leafspine:2,2,1's ports
VETHS = [("smt-h1e", NS_H1, "smt-s1p1", NS_FAB), ("smt-h2e", NS_H2, "smt-s2p1", NS_FAB),
         ("smt-s1p2", NS_FAB, "smt-s3p1", NS_FAB), ("smt-s1p3", NS_FAB, "smt-s4p1", NS_FAB),
         ("smt-s2p2", NS_FAB, "smt-s3p2", NS_FAB), ("smt-s2p3", NS_FAB, "smt-s4p2", NS_FAB)]
PORTS = {"s1": [1, 2, 3], "s2": [1, 2, 3], "s3": [1, 2], "s4": [1, 2]}
MAC = {"h1": "02:00:00:00:00:01", "h2": "02:00:00:00:00:02"}
GRPC = {name: f"127.0.0.1:{50061 + i}" for i, name in enumerate(PORTS)}  # inside smt-fab
RATE, COUNT = 1000, 2500  # frames/s, frames: 2.5 s of traffic





@pytest.fixture
def served_fabric(tmp_path):
    if os.geteuid() != 0 or not shutil.which("tcpdump"):
        pytest.skip("needs root and tcpdump")
    build = tmp_path / "build"
    result = subprocess.run([sys.executable, "-m", "p4compiler.cli", "--target", "bmv2",
                             "--arch", "v1model", "-o", str(build),
                             str(ROOT / "p4src" / "fabric.p4")],
                            capture_output=True, text=True, timeout=120, cwd=ROOT)
    if result.returncode != 0:
        pytest.skip(f"embedded compiler failed: {result.stderr.strip()[-300:]}")
    p4info, bmv2_json = build / "fabric.p4info.txtpb", build / "fabric.json"
    procs: list[subprocess.Popen] = []
    try:
        lab.build((NS_FAB, NS_H1, NS_H2), VETHS, {(NS_H1, "smt-h1e"): MAC["h1"],
                                                  (NS_H2, "smt-h2e"): MAC["h2"]})
        for device_id, (name, ports) in enumerate(PORTS.items(), 1):
            log = tmp_path / f"{name}.log"
            ifaces = [a for p in ports for a in ("-i", f"{p}@smt-{name}p{p}")]
            with open(log, "w") as out:
                procs.append(subprocess.Popen(
                    ["ip", "netns", "exec", NS_FAB, sys.executable, "-m", "p4switch.cli",
                     "--device-id", str(device_id), *ifaces, "--cpu-port", "510",
                     "--grpc-server-addr", GRPC[name], "--no-p4"],
                    stdout=out, stderr=subprocess.STDOUT, cwd=ROOT))
        for name, proc in zip(PORTS, procs, strict=True):
            lab.wait_for(tmp_path / f"{name}.log", "running", proc)
        switches = [a for name, addr in GRPC.items() for a in ("--switch", f"{name}={addr}")]
        watched = [a for name, ports in PORTS.items() for p in ports if p > 1 or
                   name in ("s3", "s4") for a in ("--iface", f"{name}:{p}=smt-{name}p{p}")]
        sm_log = tmp_path / "sm.log"
        with open(sm_log, "w") as out:
            procs.append(subprocess.Popen(
                ["ip", "netns", "exec", NS_FAB, sys.executable, "-m", "controller.cli", "serve",
                 "leafspine:2,2,1", *switches, *watched, "--engine", "ftree",
                 "--p4info", str(p4info), "--bmv2-json", str(bmv2_json),
                 "--timeline", str(tmp_path / "timeline.jsonl"),
                 "--address-book", str(tmp_path / "book.json")],
                stdout=out, stderr=subprocess.STDOUT, cwd=ROOT))
        lab.wait_for(sm_log, "serving", procs[-1])
        yield tmp_path
    finally:
        for proc in reversed(procs):  # by PID: `ip netns exec` execs the program itself
            lab.stop(proc)
        lab.teardown((NS_FAB, NS_H1, NS_H2), VETHS)


def _rx_packets(ifname: str) -> int:
    out = lab.run("cat", f"/sys/class/net/{ifname}/statistics/rx_packets", ns=NS_FAB).stdout
    return int(out.strip())


@pytest.mark.slow
def test_cutting_the_cable_in_use_costs_milliseconds_of_traffic(served_fabric):
    tmp = served_fabric
    h2 = json.loads((tmp / "book.json").read_text())["hosts"]["h2"]
    pcap = tmp / "h2.pcap"
    with Capture("smt-h2e", pcap, spawn=["ip", "netns", "exec", NS_H2], direction="in"):
        sender = subprocess.Popen(
            ["ip", "netns", "exec", NS_H1, sys.executable, "-m", "traffic.sender",
             "--iface", "smt-h1e", "--src-mac", MAC["h1"], "--dst-mac", MAC["h2"],
             "--slid", "1", "--dlid", str(h2["lid"]), "--flow", "1", "--count", str(COUNT),
             "--rate", str(RATE), "--payload", "32", "--log", str(tmp / "h1.csv")],
            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            time.sleep(1.0)
            # the spine end of the s1 uplink that carries the flow
            busy = max(("smt-s3p1", "smt-s4p1"), key=_rx_packets)
            cut_ns = time.time_ns()
            lab.run("ip", "-n", NS_FAB, "link", "set", busy, "down")
            assert sender.wait(timeout=30) == 0, sender.stderr.read()
        finally:
            lab.stop(sender)
        time.sleep(0.5)
    arrivals = [ts for ts, _frame in read_frames(pcap)]
    timeline = [json.loads(line) for line in (tmp / "timeline.jsonl").read_text().splitlines()]
    s1_down = next(r for r in timeline if r["switch"] == "s1" and r["event"] == "port_down")
    # whichever end of the cable reported first triggered the global reroute
    reroute = next(r for r in timeline if r["event"] == "port_down" and "note" not in r)
    after = [t for t in arrivals if t >= cut_ns]
    # the longest silence at the receiver from just before the cut on (frames every 1 ms)
    around = sorted(t for t in arrivals if t >= cut_ns - 20_000_000)
    gap_ms = max((b - a for a, b in zip(around, around[1:])), default=0) / 1e6
    print(f"\nreceived {len(arrivals)}/{COUNT}, gap {gap_ms} ms, s1 {s1_down}, "
          f"reroute {reroute}")
    assert after, "nothing arrived after the cut"
    assert s1_down["port"] == int(busy[len("smt-s")]) - 1 and "error" not in s1_down  # s3: 2
    assert s1_down["switchover_ms"] < 100
    assert reroute["link"] == s1_down["link"] and reroute["global_reroute_ms"] < 2000
    assert gap_ms < 250  # generous: two shared cores, five Python processes
    assert len(arrivals) >= COUNT - RATE * 0.25
