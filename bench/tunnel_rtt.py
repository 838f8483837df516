"""Round-trip time of a cross-server link (VXLAN between two namespace servers) against a
local one (a veth inside one server), in the kernel, without switches:

    .venv/bin/python -m bench.tunnel_rtt

Uses the servers a distributed run makes (topologies/servers.py); everything made is in a
ledger and removed at the end. ICMP only between the run's own namespaces.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile

from topologies.ledger import Ledger
from topologies.servers import ServerSet, make_namespace_servers


def _sh(*cmd: str) -> str:
    done = subprocess.run(list(cmd), capture_output=True, text=True, check=False)
    if done.returncode:
        raise RuntimeError(f"{' '.join(cmd)}: {done.stderr.strip()}")
    return done.stdout


def _rtt_ms(netns: str, address: str, count: int = 300) -> dict[str, float]:
    out = _sh("ip", "netns", "exec", netns, "ping", "-q", "-c", str(count), "-i", "0.005",
              address)
    lo, avg, hi = re.search(r"= ([\d.]+)/([\d.]+)/([\d.]+)", out).groups()
    return {"min_ms": float(lo), "avg_ms": float(avg), "max_ms": float(hi)}


def _links(servers: ServerSet, ledger: Ledger) -> tuple[str, str]:
    a, b = servers.servers
    local = f"{ledger.prefix}loc"
    ledger.add_namespace(local)
    _sh("ip", "netns", "add", local)
    _sh("ip", "-n", a.netns, "link", "add", "vl0", "type", "veth", "peer", "name", "vl1",
        "netns", local)
    for ns, dev, ip in ((a.netns, "vl0", "10.99.0.1/30"), (local, "vl1", "10.99.0.2/30")):
        _sh("ip", "-n", ns, "addr", "add", ip, "dev", dev)
        _sh("ip", "-n", ns, "link", "set", dev, "up")
    for srv, peer, ip in ((a, b, "10.99.1.1/30"), (b, a, "10.99.1.2/30")):
        _sh("ip", "-n", srv.netns, "link", "add", "vx0", "type", "vxlan", "id", "77", "local",
            srv.address, "remote", peer.address, "dstport", "4789", "nolearning")
        _sh("ip", "-n", srv.netns, "addr", "add", ip, "dev", "vx0")
        _sh("ip", "-n", srv.netns, "link", "set", "vx0", "up")
    return "10.99.0.2", "10.99.1.2"


def measure() -> dict[str, dict[str, float]]:
    ledger_dir = tempfile.mkdtemp(prefix="fl-bench-ledger-")
    ledger = Ledger.create("bench-tunnel-rtt", ledger_dir)
    servers = None
    try:
        servers = make_namespace_servers(2, ledger)
        local, remote = _links(servers, ledger)
        first = servers.servers[0].netns
        return {"veth": _rtt_ms(first, local), "vxlan": _rtt_ms(first, remote)}
    finally:
        if servers is not None:
            servers.close()
        if not ledger.teardown():
            shutil.rmtree(ledger_dir, ignore_errors=True)


if __name__ == "__main__":
    for kind, figures in measure().items():
        print(f"{kind:<6} " + "  ".join(f"{k} {v:.3f}" for k, v in figures.items()))
