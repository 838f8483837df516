"""In-band path queries end to end: ring:4 as four embedded switch processes, host h1 in its own
namespace asking the SM's Subnet Administrator with `python -m traffic.sa_client`.

    sat-h1:sat-h1e -- sat-s1p1 [s1] -- [s2] -- [s3] -- [s4] -- back to [s1]   (namespace sat-fab)

minhop on ring:4 needs two VLs: h4 is on SL 1. The SM runs in sat-fab (P4Runtime on its
loopback) as this file run as a script (`_drive`: bring-up, serve_sa, then port events read
from stdin), because the test process cannot reach the switches' loopback. Cutting s1:3
(the s4 - s1 cable) in the SM's view makes the ring a line, h4 goes back to SL 0, and h1
receives a REPORT saying so. Root, the embedded compiler and switch needed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import netns_lab as lab  # noqa: E402

ROOT = HERE.parents[1]
NS_FAB, NS_H1 = "sat-fab", "sat-h1"
RING = [("s1", 2, "s2", 2), ("s2", 3, "s3", 2), ("s3", 3, "s4", 2), ("s4", 3, "s1", 3)]
VETHS = [("sat-h1e", NS_H1, "sat-s1p1", NS_FAB)] + [
    (f"sat-{a}p{ap}", NS_FAB, f"sat-{b}p{bp}", NS_FAB) for a, ap, b, bp in RING]
H1_MAC = "02:00:00:00:00:01"
GRPC = {f"s{n}": f"127.0.0.1:{50060 + n}" for n in range(1, 5)}  # inside sat-fab only



def _ports(switch: str) -> list[str]:
    ports = [(1, "sat-s1p1")] if switch == "s1" else []
    for a, ap, b, bp in RING:
        ports += [(ap, f"sat-{a}p{ap}")] if a == switch else []
        ports += [(bp, f"sat-{b}p{bp}")] if b == switch else []
    return [arg for port, iface in sorted(ports) for arg in ("-i", f"{port}@{iface}")]


@pytest.fixture
def compiled(tmp_path):
    return lab.compile_fabric(tmp_path / "build", ("ip",))


class SmDriver:
    """The SM process: one command a line on stdin, one JSON answer a line on stdout."""

    def __init__(self, proc: subprocess.Popen) -> None:
        self.proc = proc

    def ask(self, command: str) -> dict:
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            pytest.fail(f"SM driver exited on {command!r}: {self.proc.stderr.read()[-800:]}")
        return json.loads(line)


@pytest.fixture
def ring_netns(compiled, tmp_path):
    """ring:4 switches in sat-fab, h1 in sat-h1, the SM serving SA: yields the SmDriver.
    Every process is stopped by PID and the namespaces deleted, whatever happens."""
    p4info, bmv2_json = compiled
    procs: list[subprocess.Popen] = []
    try:
        lab.build((NS_FAB, NS_H1), VETHS, {(NS_H1, "sat-h1e"): H1_MAC})
        for device_id, name in enumerate(GRPC, 1):
            log = tmp_path / f"{name}.log"
            with open(log, "w") as out:
                procs.append(subprocess.Popen(
                    ["ip", "netns", "exec", NS_FAB, sys.executable, "-m", "p4switch.cli",
                     "--device-id", str(device_id), *_ports(name), "--cpu-port", "510",
                     "--grpc-server-addr", GRPC[name], "--no-p4"],
                    stdout=out, stderr=subprocess.STDOUT, cwd=ROOT))
            lab.wait_for(log, "running", procs[-1])
        driver = subprocess.Popen(
            ["ip", "netns", "exec", NS_FAB, sys.executable, str(Path(__file__)),
             str(p4info), str(bmv2_json), str(tmp_path / "sa_log.jsonl")],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
        procs.append(driver)
        sm = SmDriver(driver)
        ready = sm.ask("ready")
        assert ready["sl"]["h4"] == 1, ready
        yield sm
    finally:
        for proc in reversed(procs):  # by PID: `ip netns exec` execs the program itself
            lab.stop(proc)
        lab.teardown((NS_FAB, NS_H1), VETHS)


def client(*args: str, check: bool = True):
    return lab.run(sys.executable, "-m", "traffic.sa_client", "--iface", "sat-h1e", *args,
                   ns=NS_H1, check=check)


@pytest.mark.slow
def test_a_host_queries_paths_in_band_and_hears_of_sl_changes(ring_netns, tmp_path):
    sm = ring_netns
    answer = json.loads(client("--dst", "h4", "--json").stdout)
    assert (answer["dname"], answer["dlid"], answer["sl"], answer["slid"]) == ("h4", 4, 1, 1)
    assert answer["dmac"] == "02:00:00:00:00:04" and answer["dguid"] == "0x0002c90300100004"
    rtts = [json.loads(client("--dst", "h2", "--json").stdout)["rtt_ms"] for _ in range(5)]
    print(f"PathRecord query round trip, ms: {sorted([answer['rtt_ms'], *rtts])}")

    unknown = client("--dst", "h9", "--timeout", "2", check=False)
    assert unknown.returncode == 1
    assert "path to h9: the SA answered NO_SUCH_DESTINATION" in unknown.stderr

    out, err = tmp_path / "listen.out", tmp_path / "listen.err"
    with open(out, "w") as stdout, open(err, "w") as stderr:
        listener = subprocess.Popen(
            ["ip", "netns", "exec", NS_H1, sys.executable, "-m", "traffic.sa_client",
             "--iface", "sat-h1e", "--listen", "20", "--json"],
            stdout=stdout, stderr=stderr, cwd=ROOT)
    try:
        lab.wait_for(err, "listening on sat-h1e", listener)
        reroute = sm.ask("down s1 3")  # the s4 - s1 cable, as s1's agent would report it
        assert reroute["sa_changed_paths"] == 1 and reroute["sa_reports_sent"] >= 1, reroute
        deadline = time.monotonic() + 10
        while not out.read_text().strip() and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        lab.stop(listener)
    notices = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(notices) == 1, notices
    assert notices[0]["method"] == "REPORT"
    assert [(r["dname"], r["dlid"], r["sl"], r["slid"]) for r in notices[0]["records"]] == \
        [("h4", 4, 0, 1)]
    assert "h1" not in sm.ask("pending")["pending"]  # h1 acknowledged its REPORT

    after = json.loads(client("--dst", "h4", "--json").stdout)
    assert after["sl"] == 0
    log = [json.loads(line) for line in (tmp_path / "sa_log.jsonl").read_text().splitlines()]
    assert [(e["requester"], e["destination"], e["status"]) for e in log][:1] == \
        [("h1", "h4", "OK")]
    assert any(e["status"] == "NO_SUCH_DESTINATION" for e in log)


def _drive(p4info: str, bmv2_json: str, log_path: str) -> int:
    """The SM in sat-fab: bring ring:4 up with minhop, serve SA, then answer commands:
    `ready` (SLs), `down SWITCH PORT` (a port event: global reroute, REPORTs), `pending`."""
    from controller.agent import PortEvent
    from controller.routing.minhop import MinHop
    from controller.sm import SubnetManager, connect_switches
    from topologies.generators import build

    fabric = build("ring:4")
    macs = {h.name: f"02:00:00:00:00:{int(h.name[1:]):02x}" for h in fabric.hosts}
    sm = SubnetManager(fabric, connect_switches(fabric, GRPC), engine=MinHop(), host_macs=macs)
    try:
        sm.bring_up(p4info, bmv2_json)
        sa = sm.serve_sa(log_path)
        for line in sys.stdin:
            command = line.split()
            if command == ["ready"]:
                book = sm.address_book()["hosts"]
                answer = {"sl": {name: h["sl"] for name, h in book.items()}}
            elif command[:1] == ["down"]:
                event = PortEvent(command[1], int(command[2]), False, time.time_ns(), 0)
                answer = sm.handle_port_event(event)
            elif command == ["pending"]:
                answer = {"pending": sorted(sa.pending_reports.values())}
            else:
                answer = {"error": f"unknown command {line.strip()!r}"}
            print(json.dumps(answer), flush=True)
    finally:
        sm.close()
    return 0


if __name__ == "__main__":
    sys.exit(_drive(*sys.argv[1:4]))
