"""OpenSM side by side: fabrics as ibsim net-files, and OpenSM's routing time on them.

`write_netfile(fabric)` writes the ibsim/ibnetdiscover form that
`topologies/netfile.py` reads back (switches `S-<guid>`, hosts `H-<guid>`, a
host's port p as CA port p+1).

`opensm_ftree_seconds(fabric, workdir)` runs the real thing (Debian packages
opensm and ibsim-utils): ibsim simulates the fabric from the net-file, and
`opensm --once -R ftree` runs with ibsim's libumad2sim.so preloaded, so it
discovers the simulated fabric with real SMPs, assigns LIDs and routes it.
The figure is the routing computation alone, from OpenSM's own log
timestamps (microseconds): "building routing with 'ftree'" to "ftree tables
configured on all switches"; discovery and LFT distribution are not in it,
as they are not in our `engine.route` time. ibsim's sockets are abstract Unix
sockets with fixed names, so one ibsim runs per host at a time.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

from topologies.description import Fabric, NodeKind


def write_netfile(fabric: Fabric) -> str:
    """The fabric as an ibsim net-file (every cable listed from both ends)."""
    ports: dict[str, list[tuple[int, str, int]]] = {n.name: [] for n in fabric.nodes}
    for link in fabric.links:
        ports[link.a].append((link.a_port, link.b, link.b_port))
        ports[link.b].append((link.b_port, link.a, link.a_port))
    kinds = {n.name: n.kind for n in fabric.nodes}
    labels = {n.name: _label(n) for n in fabric.nodes}

    def ib_port(node: str, port: int) -> int:
        return port + 1 if kinds[node] is NodeKind.HOST else port

    lines = [f"# {fabric.name}: written by fabriclab controller/opensm.py"]
    for node in sorted(fabric.nodes, key=lambda n: (n.kind is NodeKind.HOST, n.device_id,
                                                     n.guid)):
        own = sorted(ports[node.name])
        count = max((ib_port(node.name, p) for p, _, _ in own), default=1)
        kind = "Switch" if node.kind is NodeKind.SWITCH else "Hca"
        lines += ["", f"{kind} {count} \"{labels[node.name]}\""]
        lines += [f"[{ib_port(node.name, p)}] \"{labels[peer]}\"[{ib_port(peer, pp)}]"
                  for p, peer, pp in own]
    return "\n".join(lines) + "\n"


def _label(node) -> str:
    return f"{'S' if node.kind is NodeKind.SWITCH else 'H'}-{node.guid:016x}"


# ------------------------------------------------------------------ OpenSM runs

SIM_LIBRARY = Path("/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so")
_STAMP = re.compile(r"^\w{3} \d\d (\d\d):(\d\d):(\d\d) (\d{6}) ")
ROUTING_START = "building routing with 'ftree'"
ROUTING_DONE = "ftree tables configured on all switches"


class OpenSmUnavailable(Exception):
    """OpenSM or ibsim cannot run here; the message says why."""


def opensm_available() -> None:
    for tool in ("ibsim", "opensm"):
        if shutil.which(tool) is None:
            raise OpenSmUnavailable(f"{tool} not installed (apt-get install opensm ibsim-utils)")
    if not SIM_LIBRARY.exists():
        raise OpenSmUnavailable(f"{SIM_LIBRARY} missing (package libumad2sim0)")
    if any("@sim:" in line for line in Path("/proc/net/unix").read_text().splitlines()):
        raise OpenSmUnavailable("another ibsim is running (its sockets @sim:* are taken)")


def opensm_ftree_seconds(fabric: Fabric, workdir: Path, timeout: float = 120.0) -> float:
    """Run ibsim on the fabric's net-file and `opensm --once -R ftree` under it; the
    seconds between OpenSM's "building routing with 'ftree'" and "ftree tables
    configured" log lines: its routing computation, as `engine.route` is ours."""
    opensm_available()
    workdir.mkdir(parents=True, exist_ok=True)
    netfile = workdir / "fabric.net"
    netfile.write_text(write_netfile(fabric))
    nodes, ports = len(fabric.nodes), 2 * len(fabric.links) + len(fabric.nodes)
    sim_log = (workdir / "ibsim.log").open("w")
    sim = subprocess.Popen(
        ["stdbuf", "-oL", "ibsim", "-s", "-n", "-N", str(nodes + 16),
         "-S", str(len(fabric.switches) + 16), "-P", str(ports + 64), "-L", "49152",
         str(netfile)], stdout=sim_log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + timeout
        while "Network simulator ready" not in (workdir / "ibsim.log").read_text():
            if sim.poll() is not None or time.monotonic() > deadline:
                tail = (workdir / "ibsim.log").read_text().strip().splitlines()[-1:]
                raise OpenSmUnavailable(f"ibsim did not start: {tail}")
            time.sleep(0.05)
        log = workdir / "opensm.log"
        env = dict(os.environ, LD_PRELOAD=str(SIM_LIBRARY))
        proc = subprocess.run(["opensm", "--once", "-R", "ftree", "-f", str(log), "-D", "0x07",
                               "-d", "0"], env=env, capture_output=True, text=True,
                              timeout=max(1.0, deadline - time.monotonic()), check=False)
        if proc.returncode != 0 or not log.exists():
            raise OpenSmUnavailable(f"opensm failed ({proc.returncode}): "
                                    f"{(proc.stdout + proc.stderr).strip()[-200:]}")
        return _routing_seconds(log.read_text())
    finally:
        os.killpg(sim.pid, signal.SIGTERM)
        sim.wait(timeout=10)
        sim_log.close()


def _routing_seconds(log: str) -> float:
    start = done = None
    for line in log.splitlines():
        if ROUTING_START in line:
            start = _seconds_of(line)
        elif ROUTING_DONE in line and start is not None:
            done = _seconds_of(line)
    if start is None or done is None:
        raise OpenSmUnavailable("OpenSM's log has no ftree routing (did ftree fall back?)")
    return (done - start) % 86400  # a run across midnight


def _seconds_of(line: str) -> float:
    m = _STAMP.match(line)
    if not m:
        raise OpenSmUnavailable(f"unexpected OpenSM log line: {line[:60]!r}")
    h, mi, s, us = (int(g) for g in m.groups())
    return h * 3600 + mi * 60 + s + us / 1e6
