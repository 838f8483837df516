"""One fabric over three namespace servers (each with its own sshd on a management
network the run makes): Mininet's cluster nodes, VXLAN tunnels between servers."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fabriclab import scenario as sc
from fabriclab.runner import ROOT, run
from topologies.ledger import prefixed_names, start_time
from topologies.targets import Target

pytestmark = [pytest.mark.mininet, pytest.mark.slow]
pytest.importorskip("mininet.examples.cluster")
if not Path("/usr/sbin/sshd").exists():
    pytest.skip("needs sshd (apt-get install openssh-server)", allow_module_level=True)


def test_incast_in_credit_mode_on_three_servers_loses_nothing(tmp_path):
    before = prefixed_names()
    scenario = sc.load("incast").with_overrides("leafspine:2,2,2", "credit", "ns:3", "block")
    result = run(scenario, Target.EMBEDDED, tmp_path)
    m = result.metrics
    assert m.error is None, m.error
    assert m.verdict == "pass" and m.lost == 0 and m.received == m.sent > 0
    assert m.credit_frames > 0, "credit frames crossed the fabric, tunnels included"
    cluster = m.cluster
    assert sorted(cluster["servers"]) == ["srv1", "srv2", "srv3"]
    assert set(cluster["node_server"]) == {"s1", "s2", "s3", "s4", "h1", "h2", "h3", "h4"}
    # block: leaves s1, s2 on srv1, spine s3 on srv2, spine s4 on srv3: every
    # leaf-spine link crosses servers.
    assert cluster["node_server"]["s3"] == "srv2" and cluster["node_server"]["s4"] == "srv3"
    assert cluster["cross_server_links"] == 4 == len(cluster["tunnels"])
    assert {t["kind"] for t in cluster["tunnels"]} == {"vxlan"}
    assert all(t["mtu"] == 1500 for t in cluster["tunnels"])
    written = json.loads((result.run_dir / "metrics.json").read_text())
    assert written["cluster"]["cross_server_links"] == 4
    assert prefixed_names() - before == set(), "servers, namespaces and links all removed"


def _state(pid: int) -> str | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def _running(processes: list[dict], wait_s: float = 5.0) -> list[dict]:
    """Recorded processes still running (a zombie awaiting its reaper is not)."""
    deadline = time.monotonic() + wait_s
    while True:
        alive = [p for p in processes if start_time(p["pid"]) == p["start"]
                 and _state(p["pid"]) not in ("Z", None)]
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.2)


def _ledger_of(prefix: str) -> dict:
    for path in (ROOT / "build" / "ledger").glob("*.json"):
        data = json.loads(path.read_text())
        if data.get("prefix") == prefix:
            return data
    return {}


def test_a_killed_distributed_run_leaves_nothing_on_any_server_after_cleanup(tmp_path):
    before = prefixed_names()
    proc = subprocess.Popen(
        [sys.executable, "-m", "fabriclab.cli", "run", "--scenario", "incast", "--topo",
         "leafspine:2,2,2", "--servers", "ns:3", "--placement", "block", "--target",
         "embedded", "--results", str(tmp_path)], cwd=ROOT,
        env=dict(os.environ, PYTHONUNBUFFERED="1"), stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, start_new_session=True)
    ledger: dict = {}
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            new = prefixed_names() - before
            servers = [n for n in new if n.endswith("-srv3")]
            if servers:
                ledger = _ledger_of(servers[0][:4])
                if any(p["what"].startswith("switch") for p in ledger.get("processes", [])):
                    break
            time.sleep(0.2)
        time.sleep(1.0)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the runner and its session; not its children's
        proc.wait()
    assert ledger, "the run made its servers and started switches before it was killed"
    alive = _running(ledger["processes"], wait_s=0)
    assert alive, "the killed run left processes behind (sshd, switches) to clean up"
    assert ledger["namespaces"] == [f"{ledger['prefix']}srv{i}" for i in (1, 2, 3)]
    done = subprocess.run([sys.executable, "-m", "fabriclab.cli", "cleanup"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "3 namespaces" in done.stdout
    assert _running(ledger["processes"]) == []
    assert ledger["directories"] and not any(Path(d).exists() for d in ledger["directories"])
    assert prefixed_names() - before == set(), "no namespace, bridge or veth left"


def test_a_link_between_servers_fails_mid_collective_and_fast_reroute_recovers(tmp_path):
    from tests.scenarios.test_fault_scenarios import ROUTING, _failed_link_on_path

    topology = "leafspine:2,2,1"
    link = _failed_link_on_path(topology, "h1", "h2")
    data = sc.load("link-failure-allreduce").as_dict()
    data.update(topology=topology, duration_s=20, routing=ROUTING,
                faults=[{"at_s": 0.1, "kind": "link_down", "target": link}],
                cluster={"servers": "ns:3", "placement": "block"})
    m = run(sc.parse(data, "cross-server link failure"), Target.EMBEDDED, tmp_path).metrics
    assert m.error is None, m.error
    a, b = link.split("-")
    assert m.cluster["node_server"][a] != m.cluster["node_server"][b], "the link is a tunnel"
    # as on one server (tests/scenarios/test_fault_scenarios.py): the collective
    # completes, every PSN arrives, what the fabric lost was on the failed link
    assert m.verdict == "pass", (m.verdict, m.verdict_reasons, m.problems)
    assert m.cct_ms is not None and m.lost == 0
    assert m.unexplained_loss <= 0, m.problems
    assert m.recovery_gap_ms is not None, "a flow crossed the failed link"
    assert [f.link for f in m.link_failures] == [link]
    assert any(r.get("event") == "port_down" for r in m.sm_timeline), "the SM heard of it"
    assert m.held_in_fabric == 0, m.held_at_end
